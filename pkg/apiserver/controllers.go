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

package apiserver

import (
	"context"
	"sync"

	coreinformers "k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// controllerContext is what the in-process controllers are built from, as
// kube-controller-manager's ControllerContext: the clients, the informers
// the server shares, and the configuration.
type controllerContext struct {
	cfg                     *ControllerConfig
	kubeClient, eventClient kubernetes.Interface
	// loopback reaches our own API through the privileged loopback client.
	loopback versioned.Interface
	// factory is the server-wide factory (started by the server, for its
	// lifetime) and podInformer its pod informer, shared with admission.
	factory     coreinformers.SharedInformerFactory
	podInformer corev1informers.PodInformer
	clock       clock.WithTicker
}

// termInformers are the informers of one leadership term.
type termInformers struct {
	evictionRequests externalversions.SharedInformerFactory
}

// started is a controller that was built: run runs it until ctx ends;
// abandon releases what building it took (its handlers on the shared
// informers) when it will not run. name, when set, names its logger below
// the controllers'.
type started struct {
	name    string
	run     func(ctx context.Context)
	abandon func()
}

// controllerStart builds one controller of a term.
type controllerStart func(ctx context.Context, cc controllerContext, ti termInformers) (*started, error)

// startEvictionRequestController builds the eviction request controller.
func startEvictionRequestController(ctx context.Context, cc controllerContext, ti termInformers) (*started, error) {
	c, err := evictionrequest.NewController(ctx, cc.kubeClient, cc.loopback.CoordinationV1alpha1(),
		ti.evictionRequests.Coordination().V1alpha1().EvictionRequests(), cc.podInformer, cc.clock,
		evictionrequest.Options{EventClient: cc.eventClient, CallTimeout: cc.cfg.CallTimeout})
	if err != nil {
		return nil, err
	}
	return &started{
		run:     func(ctx context.Context) { c.Run(ctx, cc.cfg.Workers) },
		abandon: func() { c.Close(ctx) },
	}, nil
}

// startNodeDrainController builds the declarative node drain, or nothing
// when it is off.
func startNodeDrainController(ctx context.Context, cc controllerContext, ti termInformers) (*started, error) {
	if cc.cfg.NodeDrain == nil {
		return nil, nil
	}
	req, err := requester.New(cc.cfg.NodeDrain.Requester, cc.loopback, cc.kubeClient.CoreV1(),
		requester.Options{FieldManager: nodedrain.ControllerName, CallTimeout: cc.cfg.CallTimeout})
	if err != nil {
		return nil, err
	}
	source := nodedrain.CoordinationSource(req, ti.evictionRequests.Coordination().V1alpha1().EvictionRequests())
	c, err := nodedrain.NewController(ctx, cc.kubeClient, cc.eventClient, source,
		cc.factory.Core().V1().Nodes(), cc.podInformer, cc.factory.Policy().V1().PodDisruptionBudgets(), cc.clock, cc.cfg.CallTimeout)
	if err != nil {
		return nil, err
	}
	return &started{
		name:    nodedrain.ControllerName,
		run:     func(ctx context.Context) { c.Run(ctx, cc.cfg.NodeDrain.Workers) },
		abandon: func() { c.Close(ctx) },
	}, nil
}

// controllerStarts are the in-process controllers, in the order they are built.
var controllerStarts = []controllerStart{startEvictionRequestController, startNodeDrainController}

// startControllers builds every controller of a term. When one fails, the
// ones built before it are abandoned: their handlers must not stay on the
// server-wide pod informer, which outlives the term, and the next term
// registers its own.
func startControllers(ctx context.Context, cc controllerContext, ti termInformers, starts []controllerStart) ([]*started, error) {
	var controllers []*started
	for _, start := range starts {
		s, err := start(ctx, cc, ti)
		if err != nil {
			for _, built := range controllers {
				built.abandon()
			}
			return nil, err
		}
		if s != nil {
			controllers = append(controllers, s)
		}
	}
	return controllers, nil
}

// runTerm runs the controllers for one leadership term, with informers of
// the term's own, so that nothing of a lost term acts in the next one.
func (cc controllerContext) runTerm(ctx context.Context) {
	ti := termInformers{evictionRequests: externalversions.NewSharedInformerFactoryWithOptions(cc.loopback, 0,
		externalversions.WithTransform(cachetransform.StripMetadata))}
	defer ti.evictionRequests.Shutdown()
	controllers, err := startControllers(ctx, cc, ti, controllerStarts)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Cannot start the in-process controllers")
		return
	}
	// The server-wide factory is started by the server; only the term's
	// own informers start and stop with the term.
	ti.evictionRequests.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, c := range controllers {
		runCtx := ctx
		if c.name != "" {
			runCtx = klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), c.name))
		}
		wg.Go(func() { c.run(runCtx) })
	}
	wg.Wait()
}
