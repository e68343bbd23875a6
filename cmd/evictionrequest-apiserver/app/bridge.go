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
	"errors"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/apiserver/authentication"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/cmd/assembly"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// applyBridge sets the server's eviction API bridge and adds its janitor
// to the controllers. The bridge writes requests through kube-apiserver as
// the server's own identity (the RBAC of the eviction-bridge component) and
// reads them through the server's loopback client: the server answers its
// webhook only once their cache synced, which must not wait for
// kube-apiserver to reach the server.
func applyBridge(o *options.BridgeOptions, config *apiserver.Config, controllers *ControllerOptions, certFile string) error {
	if !o.Enabled {
		return nil
	}
	if config.GenericConfig.ClientConfig == nil {
		return errors.New("the eviction API bridge needs a kubeconfig of the cluster (--kubeconfig or in-cluster)")
	}
	clients, err := assembly.BridgeClients(controllers.Client.ApplyTo(config.GenericConfig.ClientConfig), evictionapi.Coordination)
	if err != nil {
		return err
	}
	loopback, err := versioned.NewForConfig(rest.AddUserAgent(rest.CopyConfig(config.GenericConfig.LoopbackClientConfig), bridge.UserAgent))
	if err != nil {
		return err
	}
	// The bridge's own cache of requests keeps everything: it reads its
	// annotations.
	requests := externalversions.NewSharedInformerFactory(loopback, 0)
	b, err := assembly.NewEvictionBridge(o, assembly.BridgeDeps{
		API: evictionapi.Coordination, Clients: clients,
		Informers: participant.Informers{Kube: config.GenericConfig.SharedInformerFactory, EvictionRequests: requests},
		Own:       []assembly.InformerFactory{requests}, CertFile: certFile, CallTimeout: controllers.Client.CallTimeout,
	})
	if err != nil {
		return err
	}
	config.ExtraConfig.EvictionBridge = &apiserver.EvictionBridge{Path: bridge.Path, Handler: b, Ready: b.ReadyCheck(), Start: b.Start}
	if authn := &config.GenericConfig.Authentication; authn.Authenticator != nil {
		// The bridge authenticates kube-apiserver itself
		// (--eviction-bridge-client-ca-file); the server's filters see
		// kube-apiserver as the bridge names it, anyone else as anonymous.
		authn.Authenticator = authentication.SelfAuthenticatedOn(bridgePaths(o), b.Callers(), authn.Authenticator)
	}
	if ca := b.ClientCA(); ca != nil {
		// The TLS server asks for a client certificate of the bridge's CA
		// too, beside those delegated authentication trusts.
		serving := config.GenericConfig.SecureServing
		if serving == nil {
			return errors.New("the eviction API bridge needs the secure port")
		}
		if serving.ClientCA == nil {
			serving.ClientCA = ca
		} else {
			serving.ClientCA = dynamiccertificates.NewUnionCAContentProvider(serving.ClientCA, ca)
		}
	}
	if m := config.ExtraConfig.Controllers; m != nil {
		m.Controllers = append(m.Controllers, b.Controllers()...)
	}
	return nil
}

// bridgePaths are the paths of the bridge, which authenticates its callers
// itself (authentication.SelfAuthenticatedOn) and which authorization lets
// through: kube-apiserver calls admission webhooks with the credentials of
// its admission configuration, if any, not as a user of the cluster.
func bridgePaths(o *options.BridgeOptions) []string {
	if !o.Enabled {
		return nil
	}
	return []string{bridge.Path}
}
