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

// Package nodedrain is the declarative node drain: a requester that
// evictionrequest-apiserver (on coordination.k8s.io) and
// evictionrequest-controller (on lifecycle.k8s.io) run among their
// controllers when --enable-node-drain-controller is set, built by one
// assembly (options.NodeDrainOptions.Descriptor). A node marked with the
// DrainAnnotation (evictionrequest.coordination.k8s.io/drain=true) is cordoned, and
// every pod of it that a drain evicts (pkg/drain decides, as for the kubectl
// plugin) gets an EvictionRequest with this requester, including pods that
// land on the node later; with Options.DrainOnMaintenancePlanned, so is a
// node whose MaintenancePlanned condition is True. A node that reports a
// graceful shutdown (GracefulNodeShutdownInProgress=True, or without that
// condition a Ready condition saying "node is shutting down") gets the same
// requests, without cordoning, so that interceptors learn of it within the
// shutdown grace period. When none holds any more the requester withdraws
// from the requests that are not complete and uncordons the node if it
// cordoned it. Progress shows on the Node as Kubernetes' node lifecycle
// conditions DrainInProgress and Drained and as events.
package nodedrain

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/controller"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// PodAnnotationsRead are the pod annotations the node drain reads of the
// pods of its cache, its drains' (drain.PodAnnotationsRead): the pod cache
// of each binary that runs it keeps them.
var PodAnnotationsRead = drain.PodAnnotationsRead

const (
	// ControllerName names the controller in events, logs and field managers.
	ControllerName = "evictionrequest-node-drain"
	// DefaultRequesterName is the name the controller lists itself under in
	// spec.requesters.
	DefaultRequesterName = "nodedrain.evictionrequest.coordination.k8s.io"
	// PodNodeNameIndex indexes pods by spec.nodeName; the pod informer must
	// have it (RegisterInformers).
	PodNodeNameIndex = "spec.nodeName"

	// forbiddenRetry is how soon a withdrawal that an interceptor's Forbid
	// policy refused is tried again.
	forbiddenRetry = 30 * time.Second
)

// RegisterInformers registers on factory the informers the controller
// reads: nodes, pods indexed by node, and PodDisruptionBudgets. A factory
// the controller shares with others must have them before it starts;
// registering twice changes nothing.
func RegisterInformers(factory informers.SharedInformerFactory) error {
	factory.Core().V1().Nodes().Informer()
	factory.Policy().V1().PodDisruptionBudgets().Informer()
	pods := factory.Core().V1().Pods().Informer()
	if _, ok := pods.GetIndexer().GetIndexers()[PodNodeNameIndex]; ok {
		return nil
	}
	return pods.AddIndexers(cache.Indexers{PodNodeNameIndex: func(obj any) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			return nil, nil
		}
		return []string{pod.Spec.NodeName}, nil
	}})
}

// Options are the choices of the cluster's admin.
type Options struct {
	// DrainOnMaintenancePlanned drains a node whose MaintenancePlanned
	// condition (Kubernetes 1.37, KEP-5683) is True, as if it were
	// annotated, until the condition goes: a maintenance tool sets it and
	// waits for Drained=True.
	DrainOnMaintenancePlanned bool
	// Deadline, when positive, is how long after its start an admin's or
	// a maintenance tool's drain waits before OnDeadline, unless the
	// Node's annotations say otherwise (drain.DeadlineAnnotation).
	Deadline time.Duration
	// OnDeadline is what the drain does then; fail when empty.
	OnDeadline drain.Escalation
	// MaxConcurrentDrains, when positive, is the budget of nodes an
	// admin's or a maintenance tool's drain runs on at once (budget.go).
	MaxConcurrentDrains int
	// PoolLabel, when set, groups nodes into pools by its value; PoolBudget
	// is then the budget of each pool (budget.go). Nodes without the label
	// are in no pool.
	PoolLabel  string
	PoolBudget drain.NodeBudget
}

// Controller drains the nodes that ask for it through EvictionRequests.
type Controller struct {
	kubeClient kubernetes.Interface
	opts       Options
	// drainer holds what every node's drain session shares: the requests,
	// the pod and budget caches, and the hooks.
	drainer *drain.Helper
	// callTimeout bounds every call to the cluster.
	callTimeout time.Duration

	nodeLister corelisters.NodeLister
	podIndexer cache.Indexer
	podLister  corelisters.PodLister
	synced     []cache.InformerSynced
	handlers   controller.Handlers

	// mu guards the drain session of each node and what the events of
	// each node's drain last reported (lastReported).
	mu           sync.Mutex
	sessions     map[string]*drain.Session
	lastReported map[reportKey]string
	// draining are the nodes whose drain holds a place in the budget;
	// released, those whose drain gave its place back, which the node
	// cache may still show draining for a moment.
	draining map[string]bool
	released map[string]bool
	// completed are the nodes whose drain completed, as the controller
	// knows before its cache shows Drained=True: admitted again without
	// waiting, as a drained node is.
	completed map[string]bool

	queue       workqueue.TypedRateLimitingInterface[string]
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	clock       clock.PassiveClock
}

// NewController returns a node drain controller that requests evictions as
// p, which reads its requests from informers of factories: factories.Kube
// informs of nodes, pods and PodDisruptionBudgets too (RegisterInformers).
// The informers of requests must keep the annotations a drain reads
// (drain.RequestAnnotations).
func NewController(ctx context.Context, kubeClient kubernetes.Interface, eventClient kubernetes.Interface, p participant.Participant, factories participant.Informers,
	clock clock.WithTicker, callTimeout time.Duration, opts Options) (*Controller, error) {
	if err := RegisterInformers(factories.Kube); err != nil {
		return nil, err
	}
	nodeInformer, podInformer, pdbInformer := factories.Kube.Core().V1().Nodes(), factories.Kube.Core().V1().Pods(), factories.Kube.Policy().V1().PodDisruptionBudgets()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventClient.CoreV1().Events("")})
	c := &Controller{
		kubeClient:   kubeClient,
		opts:         opts,
		callTimeout:  callTimeout,
		nodeLister:   nodeInformer.Lister(),
		podIndexer:   podInformer.Informer().GetIndexer(),
		podLister:    podInformer.Lister(),
		synced:       []cache.InformerSynced{nodeInformer.Informer().HasSynced, podInformer.Informer().HasSynced, pdbInformer.Informer().HasSynced},
		broadcaster:  broadcaster,
		recorder:     broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: ControllerName}),
		clock:        clock,
		sessions:     map[string]*drain.Session{},
		lastReported: map[reportKey]string{},
		draining:     map[string]bool{},
		released:     map[string]bool{},
		completed:    map[string]bool{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "nodedrain", Clock: clock}),
	}
	c.drainer = &drain.Helper{
		Participant: p,
		Pods:        nodePods{c.podIndexer},
		PDBs:        pdbInformer.Lister(),
		Clock:       clock,
		OnBlocked:   c.eventBlocked,
		// Past a deadline the pods left are evicted or deleted as the
		// controller's identity, which the eviction API bridge exempts.
		Escalator:   drain.ClientEscalator{Pods: kubeClient.CoreV1(), CallTimeout: callTimeout},
		OnEscalated: c.eventEscalated,
		// A pod asked for again is read live first (Helper.LivePods).
		LivePods: kubeClient.CoreV1(), CallTimeout: callTimeout,
	}
	errs := []error{
		c.handlers.Add(nodeInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    c.enqueueNode,
			UpdateFunc: c.updateNode,
			DeleteFunc: c.deleteNode,
		}),
		c.handlers.Add(podInformer.Informer(), controller.OnEveryChange(c.enqueuePod)),
	}
	requestInformers, err := p.Inform(factories)
	errs = append(errs, err)
	for _, informer := range requestInformers {
		c.synced = append(c.synced, informer.HasSynced)
		errs = append(errs, c.handlers.Add(informer, controller.OnEveryChange(c.enqueueRequest)))
	}
	if err := errors.Join(errs...); err != nil {
		c.Close(ctx)
		return nil, err
	}
	return c, nil
}

// Run drains nodes with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)
	defer c.broadcaster.Shutdown()
	defer c.handlers.RemoveAll(ctx)
	logger.Info("Starting the node drain controller", "requester", c.drainer.Participant.Name())
	controller.RunWorkers(ctx, workers, c.synced, controller.Worker{Queue: c.queue, Sync: c.sync, Kind: "Node"})
	logger.Info("Shut down the node drain controller")
}

// state is what the drain reads of node.
func (c *Controller) state(node *corev1.Node) nodeState {
	return drainState(node, c.opts.DrainOnMaintenancePlanned)
}

// Close releases what NewController took, for a controller that will not
// run: its handlers on the shared informers, which outlive it, and its
// event broadcaster.
func (c *Controller) Close(ctx context.Context) {
	c.handlers.RemoveAll(ctx)
	c.broadcaster.Shutdown()
}
