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

package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/bridge/metrics"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// BridgeOptions configure the eviction API bridge the server can serve:
// admission on pods/eviction that sends the evictions of pods with
// interceptors through EvictionRequests.
type BridgeOptions struct {
	Enabled bool
	// Inactivity is how long the bridge keeps its request without an
	// eviction of the pod reaching it.
	Inactivity time.Duration
	// RetryAfter is the Retry-After of its refusals.
	RetryAfter time.Duration
	// ExemptUsers are user names whose evictions pass untouched, besides
	// those the webhook configuration's matchConditions exempt.
	ExemptUsers []string
	// WebhookConfiguration, when set, is the ValidatingWebhookConfiguration
	// whose caBundle the server keeps equal to the CA of its serving
	// certificate: CAFile, else ca.crt beside --tls-cert-file, else the
	// self-signed certificate's own bundle.
	WebhookConfiguration, CAFile string
}

// NewBridgeOptions returns the defaults: off.
func NewBridgeOptions() *BridgeOptions {
	return &BridgeOptions{Inactivity: bridge.DefaultInactivity, RetryAfter: bridge.DefaultRetryAfter}
}

// AddFlags adds the bridge's flags to fs.
func (o *BridgeOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "enable-eviction-bridge", o.Enabled,
		"Serve the eviction API bridge at "+bridge.Path+" on the secure port, for a ValidatingWebhookConfiguration on pods/eviction "+
			"(the eviction-bridge component): evictions of pods with interceptors wait for their EvictionRequest's eviction step.")
	fs.DurationVar(&o.Inactivity, "eviction-bridge-inactivity-timeout", o.Inactivity,
		"How long the bridge keeps its request for a pod once no eviction of it reaches the bridge: then it withdraws.")
	fs.DurationVar(&o.RetryAfter, "eviction-bridge-retry-after", o.RetryAfter, "Retry-After of the bridge's 429 answers.")
	fs.StringSliceVar(&o.ExemptUsers, "eviction-bridge-exempt-users", o.ExemptUsers,
		"User names whose evictions the bridge lets through untouched (the webhook's matchConditions are the first place for this).")
	fs.StringVar(&o.WebhookConfiguration, "eviction-bridge-webhook-configuration", o.WebhookConfiguration,
		"ValidatingWebhookConfiguration whose caBundle the server keeps equal to the CA of its serving certificate, so that kube-apiserver trusts the bridge however the certificate was issued.")
	fs.StringVar(&o.CAFile, "eviction-bridge-ca-file", o.CAFile,
		"CA of the serving certificate, for --eviction-bridge-webhook-configuration; default: ca.crt beside --tls-cert-file, else the self-signed certificate's bundle.")
}

// Validate checks the options.
func (o *BridgeOptions) Validate() []error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	if o.Inactivity < 10*time.Second {
		errs = append(errs, fmt.Errorf("--eviction-bridge-inactivity-timeout must be at least 10s (clients retry every few seconds), got %s", o.Inactivity))
	}
	if o.RetryAfter < time.Second {
		errs = append(errs, fmt.Errorf("--eviction-bridge-retry-after must be at least 1s, got %s", o.RetryAfter))
	}
	return errs
}

// ApplyTo sets the server's bridge, writing requests through kube-apiserver
// as the server's own identity (the RBAC of the eviction-bridge component),
// and adds its janitor to the controllers.
// kube-apiserver calls the webhook without credentials: the path is served
// to anyone, as admission webhooks are.
func (o *BridgeOptions) ApplyTo(config *apiserver.Config, client *ControllerOptions, certFile string) error {
	if !o.Enabled {
		return nil
	}
	factory := config.GenericConfig.SharedInformerFactory
	if config.GenericConfig.ClientConfig == nil || factory == nil {
		return errors.New("the eviction API bridge needs a kubeconfig of the cluster (--kubeconfig or in-cluster)")
	}
	restConfig := rest.AddUserAgent(client.Client.ApplyTo(config.GenericConfig.ClientConfig), bridge.JanitorName)
	kube, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	evr, err := versioned.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	p, err := participant.New(evictionapi.Coordination, bridge.CoordinationRequester, kube, evr,
		requester.Options{CallTimeout: client.Client.CallTimeout})
	if err != nil {
		return err
	}
	// The bridge reads the requests through the server's loopback client:
	// the server answers its webhook only once their cache synced, which
	// must not wait for kube-apiserver to reach the server.
	loopback, err := versioned.NewForConfig(rest.AddUserAgent(rest.CopyConfig(config.GenericConfig.LoopbackClientConfig), bridge.JanitorName))
	if err != nil {
		return err
	}
	requests := externalversions.NewSharedInformerFactory(loopback, 0)
	broadcaster := record.NewBroadcaster()
	b, err := bridge.New(bridge.Config{
		Participant: p, Informers: participant.Informers{Kube: factory, EvictionRequests: requests},
		Pods: factory.Core().V1().Pods().Lister(), Kube: kube, Clock: clock.RealClock{},
		Recorder:   broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "eviction-bridge"}),
		Inactivity: o.Inactivity, RetryAfter: o.RetryAfter, CallTimeout: client.Client.CallTimeout, Exempt: o.ExemptUsers,
	})
	if err != nil {
		return err
	}
	metrics.Register()
	config.ExtraConfig.EvictionBridge = &apiserver.EvictionBridge{
		Path: bridge.Path, Handler: b, Synced: b.HasSynced,
		Start: func(ctx context.Context) {
			broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
			requests.Start(ctx.Done())
			go func() {
				<-ctx.Done()
				broadcaster.Shutdown()
			}()
			go b.ExemptSelf(ctx, kube)
			if o.WebhookConfiguration != "" {
				go o.syncCABundle(ctx, kube, certFile, client.Client.CallTimeout)
			}
		},
	}
	if m := config.ExtraConfig.Controllers; m != nil {
		m.Controllers = append(m.Controllers, controllermanager.Descriptor{Name: bridge.JanitorName, Enabled: true,
			Init: func(context.Context, *controllermanager.Context) (controllermanager.Controller, error) {
				return bridge.NewJanitor(b)
			}})
	}
	return nil
}

// syncCABundle keeps retrying, until it succeeds or ctx ends, to make the
// CA of the serving certificate the caBundle of the bridge's webhook.
func (o *BridgeOptions) syncCABundle(ctx context.Context, kube kubernetes.Interface, certFile string, timeout time.Duration) {
	caFile := o.CAFile
	if caFile == "" {
		caFile = filepath.Join(filepath.Dir(certFile), "ca.crt")
		if _, err := os.Stat(caFile); err != nil {
			// A self-signed certificate's file bundles its CA.
			caFile = certFile
		}
	}
	_ = wait.PollUntilContextCancel(ctx, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		ca, err := os.ReadFile(caFile)
		if err == nil {
			err = bridge.SyncCABundle(ctx, kube.AdmissionregistrationV1().ValidatingWebhookConfigurations(), o.WebhookConfiguration, ca, timeout)
		}
		if err != nil {
			klog.FromContext(ctx).Error(err, "The eviction API bridge's webhook may not trust the server yet; retrying")
		}
		return err == nil, nil
	})
}

// servePaths are what the bridge adds to the paths served without
// credentials and authorized to anyone: kube-apiserver calls admission
// webhooks without credentials.
func (o *BridgeOptions) servePaths() []string {
	if !o.Enabled {
		return nil
	}
	return []string{bridge.Path}
}
