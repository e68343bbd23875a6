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

// Package evictor is the default responder of lifecycle.k8s.io/v1alpha1
// Evictions, imperative-eviction.k8s.io/evictor: when its turn comes (last,
// at priority 100), it evicts the pod through the Eviction API with a UID
// precondition and backoff, heartbeats while it waits, reports the failed
// attempts and the PodDisruptionBudget that refuses them in its message,
// and completes its turn once the pod is gone or terminal. It evicts
// DaemonSet and mirror pods too, as the API's documentation says (the
// controller of coordination.k8s.io leaves them to their owners). Its
// messages are the upstream pull request's (kubernetes/kubernetes#137396);
// the eviction itself is the shared core's (pkg/controller/eviction).
package evictor

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	lifecycleinformers "k8s.io/client-go/informers/lifecycle/v1alpha1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	lifecyclelisters "k8s.io/client-go/listers/lifecycle/v1alpha1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/controller"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/util/lifecycleindex"
)

// PodAnnotationsRead are the pod annotations the evictor reads of the pods
// of its cache: those of the Eviction API's evictor it calls.
var PodAnnotationsRead = eviction.PodAnnotationsRead

// ManagersTakenOver are the field managers whose fields the evictor takes
// over before it writes an Eviction (takeover): the name an earlier release
// of the evictor applied under, and kube-controller-manager's evictor's,
// whose fields it leaves behind when it hands its objects back. The caches
// of the evictor keep their managedFields entries.
var ManagersTakenOver = []string{legacyFieldManager, ControllerName}

const (
	// Name is the responder the evictor answers as.
	Name = lifecycleutil.Evictor
	// ControllerName names the evictor in events, logs and
	// evictionrequest-controller's --controllers: kube-controller-manager's
	// name for its own from 1.38 on.
	ControllerName = "imperative-eviction-responder-controller"
	// FieldManager is the field manager of its writes, apart from
	// kube-controller-manager's (ControllerName), as the controller's.
	FieldManager = "evictionrequest.github.io/imperative-eviction-responder"
	// legacyFieldManager is the field manager an earlier release of the
	// evictor applied under.
	legacyFieldManager = "evictionrequest-evictor"
	// HeartbeatInterval is how often the evictor heartbeats while it waits
	// for a pod to terminate or for its next attempt: well within the
	// 20-minute deadline, and never more often than every 20 seconds.
	HeartbeatInterval = 2 * time.Minute
	// BackoffBase and BackoffMax space out the attempts the Eviction API
	// refuses: 5 s, doubling up to 10 minutes, as the upstream pull request
	// does (or longer when the API asks with Retry-After).
	BackoffBase = 5 * time.Second
	BackoffMax  = 10 * time.Minute
)

// Options tune a Controller; the zero value is fine.
type Options struct {
	// CallTimeout bounds every API call; 30s when zero.
	CallTimeout time.Duration
	// EventClient records the events; the client when nil.
	EventClient kubernetes.Interface
}

// Controller is the default evictor.
type Controller struct {
	client      kubernetes.Interface
	eventClient kubernetes.Interface
	callTimeout time.Duration
	evictor     *eviction.Evictor

	evictionLister  lifecyclelisters.EvictionLister
	evictionIndexer cache.Indexer
	podLister       corelisters.PodLister
	synced          []cache.InformerSynced
	// handlers are its registrations on the informers, removed when it
	// stops: a process's informers may outlive its term.
	handlers controller.Handlers

	queue       workqueue.TypedRateLimitingInterface[string]
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	clock       clock.WithTicker
}

// NewController returns an evictor over the given informers, which must
// not have started: it indexes the Evictions by target.
func NewController(ctx context.Context, client kubernetes.Interface, evictionInformer lifecycleinformers.EvictionInformer,
	podInformer coreinformers.PodInformer, clock clock.WithTicker, opts Options) (*Controller, error) {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = evictionapi.DefaultCallTimeout
	}
	if opts.EventClient == nil {
		opts.EventClient = client
	}
	if err := lifecycleindex.AddEvictions(evictionInformer.Informer()); err != nil {
		return nil, err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	c := &Controller{
		client:      client,
		eventClient: opts.EventClient,
		callTimeout: opts.CallTimeout,
		evictor: &eviction.Evictor{Client: client, Backoff: eviction.NewBackoffBetween(BackoffBase, BackoffMax),
			Clock: clock, CallTimeout: opts.CallTimeout, EveryPod: true},
		evictionLister:  evictionInformer.Lister(),
		evictionIndexer: evictionInformer.Informer().GetIndexer(),
		podLister:       podInformer.Lister(),
		synced:          []cache.InformerSynced{evictionInformer.Informer().HasSynced, podInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: ControllerName, Clock: clock}),
		broadcaster: broadcaster,
		recorder:    broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: ControllerName}),
		clock:       clock,
	}
	if err := c.addHandlers(ctx, evictionInformer.Informer(), podInformer.Informer()); err != nil {
		c.Close(ctx)
		return nil, err
	}
	return c, nil
}

// addHandlers wakes the queue on every Eviction the evictor responds to,
// and on its pod's deletion or end; Run, or Close, removes them.
func (c *Controller) addHandlers(ctx context.Context, evictions, pods cache.SharedIndexInformer) error {
	logger := klog.FromContext(ctx)
	options := cache.HandlerOptions{Logger: &logger}
	if err := c.handlers.AddWithOptions(evictions, cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	}, options); err != nil {
		return err
	}
	return c.handlers.AddWithOptions(pods, cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Pod)
			pod, ok2 := newObj.(*corev1.Pod)
			if ok1 && ok2 && (!old.DeletionTimestamp.Equal(pod.DeletionTimestamp) || podutil.IsTerminal(old) != podutil.IsTerminal(pod)) {
				c.enqueuePod(pod)
			}
		},
		DeleteFunc: c.podDeleted,
	}, options)
}

// RegisterInformers asks factory for the informers the evictor reads, with
// their index, before it starts: a process that shares its informers with
// every term starts them once.
func RegisterInformers(factory informers.SharedInformerFactory) error {
	factory.Core().V1().Pods().Informer()
	return lifecycleindex.AddEvictions(factory.Lifecycle().V1alpha1().Evictions().Informer())
}

// Close releases what NewController took, for an evictor that will not
// run: its handlers on informers that outlive it.
func (c *Controller) Close(ctx context.Context) {
	c.handlers.RemoveAll(ctx)
	c.broadcaster.Shutdown()
}

// enqueue wakes an Eviction the evictor is a responder of.
func (c *Controller) enqueue(obj any) {
	ev, ok := obj.(*lifecyclev1alpha1.Eviction)
	if !ok || lifecycleutil.TargetResponder(ev, Name) == nil {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(ev)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// podDeleted forgets the backoff of a pod that is gone, even when its
// Eviction went first (the garbage collector deletes it with the pod), and
// wakes the Evictions left of it.
func (c *Controller) podDeleted(obj any) {
	if pod, ok := podutil.FromObject(obj); ok {
		c.evictor.Backoff.Forget(string(pod.UID))
		c.enqueuePod(pod)
	}
}

// enqueuePod wakes the Evictions of a pod whose deletion started, that
// ended, or that is gone.
func (c *Controller) enqueuePod(pod *corev1.Pod) {
	for _, ev := range lifecycleindex.Evictions(c.evictionIndexer, pod.Namespace, pod.UID) {
		c.enqueue(ev)
	}
}

// Run evicts with workers goroutines until ctx ends, then waits for them.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)
	c.broadcaster.StartStructuredLogging(3)
	c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.eventClient.CoreV1().Events("")})
	defer c.broadcaster.Shutdown()
	defer c.handlers.RemoveAll(ctx)
	logger.Info("Starting the evictor", "responder", Name, "workers", workers)
	controller.RunWorkers(ctx, workers, c.synced, controller.Worker{Queue: c.queue, Sync: c.sync, Kind: "Eviction"})
	logger.Info("Shut down the evictor")
}
