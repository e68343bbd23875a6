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

package lifecyclecontroller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	netutils "k8s.io/utils/net"

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/bridge/metrics"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// bridgeShutdownTimeout bounds how long the bridge's server waits for the
// calls in flight when the process stops.
const bridgeShutdownTimeout = 5 * time.Second

// startBridge serves the eviction API bridge on the secure port of every
// replica, from caches of the process's own, until ctx ends. It returns the
// bridge's janitor, which runs on the leader, and the check that keeps the
// replica out of /readyz until the bridge's caches synced.
func (o *Options) startBridge(ctx context.Context, client, eventClient kubernetes.Interface) (controllermanager.Descriptor, healthz.HealthChecker, error) {
	p, err := participant.New(evictionapi.Lifecycle, bridge.LifecycleRequester, client, nil, requester.Options{CallTimeout: o.Client.CallTimeout})
	if err != nil {
		return controllermanager.Descriptor{}, nil, err
	}
	// Every write of the bridge is a patch or an apply: no managedFields.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(cachetransform.StripManagedFields))
	pods := factory.Core().V1().Pods()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	b, err := bridge.New(bridge.Config{
		Participant: p, Informers: participant.Informers{Kube: factory},
		Pods: pods.Lister(), Kube: client, Clock: clock.RealClock{},
		Recorder:   broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "eviction-bridge"}),
		Inactivity: o.Bridge.Inactivity, RetryAfter: o.Bridge.RetryAfter, CallTimeout: o.Client.CallTimeout, Exempt: o.Bridge.ExemptUsers,
	})
	if err != nil {
		return controllermanager.Descriptor{}, nil, err
	}
	pods.Informer()
	if err := o.serveBridge(ctx, b); err != nil {
		return controllermanager.Descriptor{}, nil, err
	}
	metrics.Register()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventClient.CoreV1().Events("")})
	factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		broadcaster.Shutdown()
		factory.Shutdown()
	}()
	go b.ExemptSelf(ctx, client)
	if o.Bridge.WebhookConfiguration != "" {
		go o.Bridge.SyncCABundle(ctx, client, o.SecureServing.ServerCert.CertKey.CertFile, o.Client.CallTimeout)
	}
	ready := healthz.NamedCheck("eviction-bridge", func(*http.Request) error {
		if !b.HasSynced() {
			return errors.New("the eviction API bridge's caches have not synced")
		}
		return nil
	})
	janitor := controllermanager.Descriptor{Name: bridge.JanitorName, Enabled: true,
		Init: func(context.Context, *controllermanager.Context) (controllermanager.Controller, error) {
			return bridge.NewJanitor(b)
		}}
	return janitor, ready, nil
}

// serveBridge serves the bridge's webhook with TLS on --secure-port until
// ctx ends: the certificate of --tls-cert-file, else a self-signed one for
// the names of the Service of the eviction-bridge component.
func (o *Options) serveBridge(ctx context.Context, b *bridge.Bridge) error {
	ss := o.SecureServing
	service := "evictionrequest-controller." + options.InstallNamespace() + ".svc"
	if err := ss.MaybeDefaultWithSelfSignedCerts("localhost", []string{service, service + ".cluster.local"}, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return fmt.Errorf("the eviction API bridge's self-signed certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := ss.ApplyTo(&info); err != nil {
		return err
	}
	if info == nil {
		return errors.New("the eviction API bridge needs --secure-port")
	}
	mux := http.NewServeMux()
	mux.Handle(bridge.Path, b)
	_, _, err := info.Serve(mux, bridgeShutdownTimeout, ctx.Done())
	if err != nil {
		return fmt.Errorf("serving the eviction API bridge: %w", err)
	}
	klog.FromContext(ctx).Info("Serving the eviction API bridge", "address", info.Listener.Addr().String(), "path", bridge.Path)
	return nil
}
