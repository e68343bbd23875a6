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

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// controllerContext is what the controllers of one leadership term are
// built from, as kube-controller-manager's ControllerContext: the clients,
// the term's informers and the options.
type controllerContext struct {
	opts                *Options
	client, eventClient kubernetes.Interface
	informers           informers.SharedInformerFactory
	clock               clock.WithTicker
}

// controller is a built controller: run runs it until ctx ends.
type controller struct {
	name string
	run  func(ctx context.Context)
}

// controllerStart builds one controller, or none when it is off.
type controllerStart func(ctx context.Context, cc controllerContext) (*controller, error)

// startEvictionRequestController builds the eviction request controller.
func startEvictionRequestController(ctx context.Context, cc controllerContext) (*controller, error) {
	lifecycleInformers := cc.informers.Lifecycle().V1alpha1()
	c, err := lifecycle.NewController(ctx, cc.client, lifecycleInformers.Evictions(), lifecycleInformers.EvictionRequests(),
		cc.informers.Core().V1().Pods(), cc.clock, lifecycle.Options{
			HeartbeatDeadline: cc.opts.HeartbeatDeadline, CallTimeout: cc.opts.Client.CallTimeout, EventClient: cc.eventClient,
		})
	if err != nil {
		return nil, err
	}
	return &controller{name: lifecycle.ControllerName, run: func(ctx context.Context) { c.Run(ctx, cc.opts.Workers) }}, nil
}

// startEvictor builds the default evictor, unless it is off.
func startEvictor(ctx context.Context, cc controllerContext) (*controller, error) {
	if !cc.opts.Evictor {
		return nil, nil
	}
	c, err := evictor.NewController(ctx, cc.client, cc.informers.Lifecycle().V1alpha1().Evictions(), cc.informers.Core().V1().Pods(),
		cc.clock, evictor.Options{CallTimeout: cc.opts.Client.CallTimeout, EventClient: cc.eventClient})
	if err != nil {
		return nil, err
	}
	return &controller{name: evictor.ControllerName, run: func(ctx context.Context) { c.Run(ctx, cc.opts.Workers) }}, nil
}

// startNodeDrain builds the declarative node drain and graceful-shutdown
// requester, when it is on: the same controller as evictionrequest-apiserver's,
// requesting through an EvictionRequest of its own per pod.
func startNodeDrain(ctx context.Context, cc controllerContext) (*controller, error) {
	if !cc.opts.NodeDrain {
		return nil, nil
	}
	req, err := requester.NewLifecycle(cc.opts.NodeDrainRequester, cc.client,
		requester.Options{FieldManager: nodedrain.ControllerName, CallTimeout: cc.opts.Client.CallTimeout})
	if err != nil {
		return nil, err
	}
	lifecycleInformers := cc.informers.Lifecycle().V1alpha1()
	source, err := nodedrain.LifecycleSource(req, lifecycleInformers.EvictionRequests(), lifecycleInformers.Evictions())
	if err != nil {
		return nil, err
	}
	pods := cc.informers.Core().V1().Pods()
	if err := nodedrain.AddPodIndexer(pods); err != nil {
		return nil, err
	}
	c, err := nodedrain.NewController(ctx, cc.client, cc.eventClient, source, cc.informers.Core().V1().Nodes(), pods,
		cc.informers.Policy().V1().PodDisruptionBudgets(), cc.clock, cc.opts.Client.CallTimeout)
	if err != nil {
		return nil, err
	}
	return &controller{name: nodedrain.ControllerName, run: func(ctx context.Context) { c.Run(ctx, cc.opts.NodeDrainWorkers) }}, nil
}

// controllerStarts are the controllers, in the order they are built.
var controllerStarts = []controllerStart{startEvictionRequestController, startEvictor, startNodeDrain}
