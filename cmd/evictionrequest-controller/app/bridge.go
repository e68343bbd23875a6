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

package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/cmd/assembly"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/util/servingcert"
)

// bridgeShutdownTimeout bounds how long the bridge's server waits for the
// calls in flight when the process stops.
const bridgeShutdownTimeout = 5 * time.Second

// startBridge serves the eviction API bridge on the secure port of every
// replica, from the process's informers of factory, which their owner
// starts, until ctx ends. It returns the bridge's controllers, which run
// on the leader, and the check that keeps the replica out of /readyz until
// the bridge's caches synced.
func (o *Options) startBridge(ctx context.Context, config *rest.Config, factory informers.SharedInformerFactory) ([]controllermanager.Descriptor, healthz.HealthChecker, error) {
	if err := o.defaultServingCert(); err != nil {
		return nil, nil, err
	}
	clients, err := assembly.BridgeClients(config, evictionapi.Lifecycle)
	if err != nil {
		return nil, nil, err
	}
	// The bridge writes by patch or apply, and reads the annotations of
	// its requests and when the server recorded its last write of them
	// (the janitor): the binary's cache keeps them all, and the
	// managedFields of the bridge's manager (cacheManagers).
	b, err := assembly.NewEvictionBridge(o.Bridge, assembly.BridgeDeps{
		API: evictionapi.Lifecycle, Clients: clients,
		Informers: participant.Informers{Kube: factory},
		CertFile:  o.SecureServing.ServerCert.CertKey.CertFile, CallTimeout: o.Client.CallTimeout,
	})
	if err != nil {
		return nil, nil, err
	}
	if err := o.serveBridge(ctx, b, b.ClientCA()); err != nil {
		return nil, nil, err
	}
	b.Start(ctx)
	return b.Controllers(), b.ReadyCheck(), nil
}

// defaultServingCert makes a self-signed certificate for the names of the
// Service of the eviction-bridge component when --tls-cert-file is not set.
func (o *Options) defaultServingCert() error {
	err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", serviceDNSNames(), []net.IP{netutils.ParseIPSloppy("127.0.0.1")})
	if err != nil {
		return fmt.Errorf("the eviction API bridge's self-signed certificate: %w", err)
	}
	return nil
}

// serviceDNSNames are the names of the Service of evictionrequest-controller
// in the namespace it runs in, which its self-signed certificates name.
func serviceDNSNames() []string {
	service := "evictionrequest-controller." + options.InstallNamespace() + ".svc"
	return []string{service, service + ".cluster.local"}
}

// serveBridge serves the bridge's webhook with TLS on --secure-port until
// ctx ends, asking callers for a client certificate of clientCA, if any.
func (o *Options) serveBridge(ctx context.Context, handler http.Handler, clientCA dynamiccertificates.CAContentProvider) error {
	var info *server.SecureServingInfo
	if err := o.SecureServing.ApplyTo(&info); err != nil {
		return err
	}
	if info == nil {
		return errors.New("the eviction API bridge needs --secure-port")
	}
	info.ClientCA = clientCA
	servingcert.Register(servingcert.EvictionBridge, info.Cert)
	mux := http.NewServeMux()
	mux.Handle(bridge.Path, handler)
	_, _, err := info.Serve(mux, bridgeShutdownTimeout, ctx.Done())
	if err != nil {
		return fmt.Errorf("serving the eviction API bridge: %w", err)
	}
	klog.FromContext(ctx).Info("Serving the eviction API bridge", "address", info.Listener.Addr().String(), "path", bridge.Path)
	return nil
}
