/*
Copyright The EvictionRequest API Server Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package assembly

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/bridge/metrics"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// Clients are the eviction API bridge's clients, each with the bridge's
// user agent, whichever binary serves it.
type Clients struct {
	// Kube writes the bridge's requests and annotations and reads the
	// pods its cache misses; EvictionRequests writes the requests of
	// coordination.k8s.io (nil on lifecycle.k8s.io).
	Kube             kubernetes.Interface
	EvictionRequests versioned.Interface
	// EventClient records the bridge's events: a client of its own is a
	// rate limiter of its own, so that events never delay an answer.
	EventClient kubernetes.Interface
}

// BridgeClients are the clients of the eviction API bridge on api, from
// config (the binary's, with its QPS, burst and identity), named
// bridge.UserAgent in kube-apiserver's logs and metrics.
func BridgeClients(config *rest.Config, api evictionapi.API) (Clients, error) {
	config = rest.AddUserAgent(rest.CopyConfig(config), bridge.UserAgent)
	kube, eventClient, err := options.Clients(config)
	if err != nil {
		return Clients{}, err
	}
	c := Clients{Kube: kube, EventClient: eventClient}
	if api == evictionapi.Coordination {
		if c.EvictionRequests, err = versioned.NewForConfig(config); err != nil {
			return Clients{}, err
		}
	}
	return c, nil
}

// BridgeDeps are what a binary builds its eviction API bridge from: the
// only things evictionrequest-apiserver and evictionrequest-controller
// build differently.
type BridgeDeps struct {
	// API is the EvictionRequest API the bridge requests on.
	API evictionapi.API
	// Clients are the bridge's (BridgeClients).
	Clients

	// Informers are where the bridge reads the pods (Kube) and its
	// requests. They must keep the requests' annotations: the bridge reads
	// its own (bridge.LastCallAnnotation, bridge.CallersAnnotation).
	Informers participant.Informers
	// Own are the factories among Informers that the bridge starts with
	// itself and shuts down when it stops; their owner starts the others.
	Own []InformerFactory
	// CertFile is the serving certificate, whose CA the caBundle of
	// --eviction-bridge-webhook-configuration follows.
	CertFile string
	// CallTimeout bounds each of the bridge's calls.
	CallTimeout time.Duration
}

// InformerFactory is an informer factory the bridge starts and stops.
type InformerFactory interface {
	Start(stopCh <-chan struct{})
	Shutdown()
}

// EvictionBridge is a binary's eviction API bridge: the webhook's handler,
// built and not started.
type EvictionBridge struct {
	*bridge.Bridge
	opts        *options.BridgeOptions
	deps        BridgeDeps
	broadcaster record.EventBroadcaster
	// clientCA is the CA of kube-apiserver's client certificate, nil
	// when the bridge authenticates no caller.
	clientCA dynamiccertificates.CAContentProvider
	callers  *bridge.CallerAuthenticator
}

// NewEvictionBridge builds the eviction API bridge configured by o on
// deps: the one assembly of the bridge, which both binaries call.
func NewEvictionBridge(o *options.BridgeOptions, deps BridgeDeps) (*EvictionBridge, error) {
	if deps.Kube == nil || deps.Informers.Kube == nil {
		return nil, errors.New("the eviction API bridge needs a kubeconfig of the cluster (--kubeconfig or in-cluster)")
	}
	p, err := participant.New(deps.API, bridge.RequesterName(deps.API), deps.Kube, deps.EvictionRequests,
		requester.Options{CallTimeout: deps.CallTimeout})
	if err != nil {
		return nil, err
	}
	pods := deps.Informers.Kube.Core().V1().Pods()
	// The bridge's own webhook configuration, and nothing else of its
	// kind: its role may read that one object only.
	webhooks := informers.NewSharedInformerFactoryWithOptions(deps.Kube, 0, informers.WithTweakListOptions(func(opts *metav1.ListOptions) {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.WebhookConfiguration).String()
	}))
	deps.Own = append(deps.Own, webhooks)
	callers, clientCA, err := callerAuthenticator(o)
	if err != nil {
		return nil, err
	}
	broadcaster := record.NewBroadcaster()
	b, err := bridge.New(bridge.Config{
		Participant: p, Informers: deps.Informers,
		Pods: pods.Lister(), Kube: deps.Kube, Clock: clock.RealClock{},
		Namespaces:           deps.Informers.Kube.Core().V1().Namespaces(),
		WebhookConfiguration: o.WebhookConfiguration, Webhooks: webhooks.Admissionregistration().V1().ValidatingWebhookConfigurations(),
		Callers:    callers,
		Recorder:   broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "eviction-bridge"}),
		Inactivity: o.Inactivity, RetryAfter: o.RetryAfter, CallTimeout: deps.CallTimeout, Exempt: o.ExemptUsers,
	})
	if err != nil {
		return nil, err
	}
	pods.Informer()
	metrics.Register()
	return &EvictionBridge{Bridge: b, opts: o, deps: deps, broadcaster: broadcaster, clientCA: clientCA, callers: callers}, nil
}

// callerAuthenticator is the authenticator of --eviction-bridge-client-ca-file
// and the CA it verifies with; nil and nil without the flag.
func callerAuthenticator(o *options.BridgeOptions) (*bridge.CallerAuthenticator, dynamiccertificates.CAContentProvider, error) {
	if o.ClientCAFile == "" {
		return nil, nil, nil
	}
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("eviction-bridge-client-ca", o.ClientCAFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--eviction-bridge-client-ca-file: %w", err)
	}
	return bridge.NewCallerAuthenticator(ca, o.AllowedNames), ca, nil
}

// ClientCA is the CA of the client certificate the bridge requires of
// kube-apiserver, for the TLS server that serves it to ask for one; nil
// when it requires none.
func (b *EvictionBridge) ClientCA() dynamiccertificates.CAContentProvider {
	return b.clientCA
}

// Callers authenticates kube-apiserver's calls of the bridge for the
// filters of the server that serves it (authentication.SelfAuthenticatedOn);
// nil when the bridge requires no client certificate.
func (b *EvictionBridge) Callers() authenticator.Request {
	if b.callers == nil {
		return nil
	}
	return b.callers
}

// Start records the bridge's events, starts its own informers, learns the
// identity the process's controllers evict as (the bridge lets their
// evictions through) and keeps the webhook's caBundle current, until ctx
// ends.
func (b *EvictionBridge) Start(ctx context.Context) {
	b.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: b.deps.EventClient.CoreV1().Events("")})
	for _, f := range b.deps.Own {
		f.Start(ctx.Done())
	}
	go func() {
		<-ctx.Done()
		b.broadcaster.Shutdown()
		for _, f := range b.deps.Own {
			f.Shutdown()
		}
	}()
	if b.clientCA == nil {
		klog.FromContext(ctx).Info("WARNING: the eviction API bridge serves any caller: whoever reaches its port can post an AdmissionReview "+
			"and have the bridge request, with its own rights, the eviction of a pod with interceptors (responders) in a namespace that opted in, "+
			"in the name of any user (--eviction-bridge-allow-unauthenticated-callers); set --eviction-bridge-client-ca-file to the CA of kube-apiserver's client certificate for the webhook instead",
			"path", bridge.Path)
	}
	go b.ExemptSelf(ctx, b.deps.Kube)
}

// ReadyCheck keeps a replica out of /readyz until the bridge's caches have
// synced: the bridge answers on every replica.
func (b *EvictionBridge) ReadyCheck() healthz.HealthChecker {
	return healthz.NamedCheck("eviction-bridge", func(*http.Request) error {
		if !b.HasSynced() {
			return errors.New("the eviction API bridge's caches have not synced")
		}
		return nil
	})
}

// Controllers are the bridge's controllers, which run on the leader: the
// janitor, which withdraws the requests no eviction reached for a while,
// and, with --eviction-bridge-webhook-configuration, the keeper of its
// webhook's caBundle (one writer, kept current).
func (b *EvictionBridge) Controllers() []controllermanager.Descriptor {
	return []controllermanager.Descriptor{
		{Name: bridge.JanitorName, Enabled: true,
			Init: func(context.Context, *controllermanager.Context) (controllermanager.Controller, error) {
				return bridge.NewJanitor(b.Bridge)
			}},
		{Name: bridge.CABundleKeeperName, Enabled: b.opts.WebhookConfiguration != "",
			Init: func(context.Context, *controllermanager.Context) (controllermanager.Controller, error) {
				caFile := b.opts.WebhookCAFile(b.deps.CertFile)
				return bridge.NewCABundleKeeper(b.Bridge, b.deps.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations(),
					func() ([]byte, error) { return os.ReadFile(caFile) })
			}},
	}
}
