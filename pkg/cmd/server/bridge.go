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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/bridge/metrics"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// ApplyTo sets the server's bridge, writing requests through kube-apiserver
// as the server's own identity (the RBAC of the eviction-bridge component),
// and adds its janitor to the controllers.
// kube-apiserver calls the webhook without credentials: the path is served
// to anyone, as admission webhooks are.
func applyBridge(o *options.BridgeOptions, config *apiserver.Config, client *ControllerOptions, certFile string) error {
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
				go o.SyncCABundle(ctx, kube, certFile, client.Client.CallTimeout)
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

// servePaths are what the bridge adds to the paths served without
// credentials and authorized to anyone: kube-apiserver calls admission
// webhooks without credentials.
func bridgePaths(o *options.BridgeOptions) []string {
	if !o.Enabled {
		return nil
	}
	return []string{bridge.Path}
}
