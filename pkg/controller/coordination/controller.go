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

// Package coordination is the eviction request controller of KEP-4563 on
// coordination.k8s.io/v1alpha1 (the API evictionrequest-apiserver serves). It
// hands an EvictionRequest from interceptor to interceptor, highest index
// first, on completion or a missed heartbeat deadline; evicts the pod through
// the Eviction API when no interceptor is left, with backoff; and completes
// the request when the pod is gone or terminal, or when it is canceled.
package coordination

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	erscheme "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/scheme"
	coordinationclient "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/typed/coordination/v1alpha1"
	coordinationinformers "github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions/coordination/v1alpha1"
	coordinationlisters "github.com/evictionrequest/apiserver/pkg/generated/listers/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// PodAnnotationsRead are the pod annotations the controller reads of the
// pods of its cache: the interceptors each declares (its metrics) and what
// its evictor reads. evictionrequest-apiserver's pod cache keeps them.
var PodAnnotationsRead = slices.Concat([]string{v1alpha1.PodInterceptorsAnnotation}, eviction.PodAnnotationsRead)

const (
	// ControllerName names the controller in events, logs and field managers.
	ControllerName = "evictionrequest-coordination-controller"
	// queueName names the workqueue in the workqueue metrics.
	queueName = "evictionrequests"
)

// Options tune a Controller; the zero value is fine.
type Options struct {
	// EventClient records the events; the kube client when nil. A client
	// of its own gives events a rate limit budget of their own, so that
	// they never delay an eviction.
	EventClient kubernetes.Interface
	// CallTimeout bounds every call to an API; 30s when zero. A call that
	// times out fails the sync, which is retried.
	CallTimeout time.Duration
}

// Controller reconciles EvictionRequests with their pods.
type Controller struct {
	kubeClient  kubernetes.Interface
	eventClient kubernetes.Interface
	erClient    coordinationclient.EvictionRequestsGetter
	callTimeout time.Duration

	erLister  coordinationlisters.EvictionRequestLister
	erSynced  cache.InformerSynced
	podLister corelisters.PodLister
	podSynced cache.InformerSynced

	// handlers are the registrations on the shared informers, removed when
	// the controller stops so that a later leadership term starts clean.
	handlers controller.Handlers

	queue       workqueue.TypedRateLimitingInterface[string]
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	clock       clock.WithTicker
	backoff     *eviction.Backoff
	lastTurns   *lastTurnTimeouts
	// since is when this controller, made for one leadership term, was
	// made: a deadline missed before it was a previous leader's to report.
	since time.Time
}

// evictor evicts through the Eviction API with the controller's client,
// call timeout and backoff, as the default evictor of lifecycle.k8s.io does.
func (c *Controller) evictor() *eviction.Evictor {
	return &eviction.Evictor{Client: c.kubeClient, Backoff: c.backoff, Clock: c.clock, CallTimeout: c.callTimeout}
}

// NewController returns a controller that reads EvictionRequests and pods
// from the given informers, writes EvictionRequest status through erClient
// and evicts pods through kubeClient. The clock is injectable for tests.
func NewController(ctx context.Context, kubeClient kubernetes.Interface, erClient coordinationclient.EvictionRequestsGetter,
	erInformer coordinationinformers.EvictionRequestInformer, podInformer coreinformers.PodInformer, clock clock.WithTicker, opts Options) (*Controller, error) {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	if opts.EventClient == nil {
		opts.EventClient = kubeClient
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = evictionapi.DefaultCallTimeout
	}
	c := &Controller{
		kubeClient:  kubeClient,
		eventClient: opts.EventClient,
		callTimeout: opts.CallTimeout,
		erClient:    erClient,
		erLister:    erInformer.Lister(),
		erSynced:    erInformer.Informer().HasSynced,
		podLister:   podInformer.Lister(),
		podSynced:   podInformer.Informer().HasSynced,
		broadcaster: broadcaster,
		recorder:    broadcaster.NewRecorder(erscheme.Scheme, corev1.EventSource{Component: ControllerName}),
		clock:       clock,
		backoff:     eviction.NewBackoff(),
		lastTurns:   newLastTurnTimeouts(),
		since:       clock.Now(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: clock}),
	}
	for informer, enqueue := range map[cache.SharedIndexInformer]func(any){
		erInformer.Informer():  c.enqueueEvictionRequest,
		podInformer.Informer(): c.enqueuePod,
	} {
		if err := c.handlers.Add(informer, controller.OnEveryChange(enqueue)); err != nil {
			c.Close(ctx)
			return nil, err
		}
	}
	return c, nil
}

// Close releases what NewController took, for a controller that will not
// run: its handlers on the shared informers, which outlive it.
func (c *Controller) Close(ctx context.Context) {
	c.handlers.RemoveAll(ctx)
	c.broadcaster.Shutdown()
}

// Run processes EvictionRequests with workers goroutines until ctx is
// canceled, then waits for them to finish.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)
	c.broadcaster.StartStructuredLogging(3)
	c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.eventClient.CoreV1().Events("")})
	defer c.broadcaster.Shutdown()
	defer c.handlers.RemoveAll(ctx)
	logger.Info("Starting the eviction request controller", "workers", workers)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.erSynced, c.podSynced) {
		c.queue.ShutDown()
		return
	}
	// The gauges count from the caches: only once they are whole.
	metrics.SetSource(c)
	defer metrics.SetSource(nil)
	controller.RunWorkers(ctx, workers, nil, controller.Worker{Queue: c.queue, Sync: c.sync, Kind: "EvictionRequest"})
	logger.Info("Shut down the eviction request controller")
}

func (c *Controller) enqueueEvictionRequest(obj interface{}) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("cannot get the key of %T: %w", obj, err))
		return
	}
	c.queue.Add(key)
}

// enqueuePod wakes the EvictionRequest of a pod: it is named after the pod's
// UID, so the lookup is a key, not a search.
func (c *Controller) enqueuePod(obj interface{}) {
	pod, ok := podutil.FromObject(obj)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("unexpected object %T in the pod informer", obj))
		return
	}
	if _, err := c.erLister.EvictionRequests(pod.Namespace).Get(string(pod.UID)); err != nil {
		if !apierrors.IsNotFound(err) {
			utilruntime.HandleError(err)
		}
		return
	}
	c.queue.Add(pod.Namespace + "/" + string(pod.UID))
}

// eventf records an event on the EvictionRequest.
func (c *Controller) eventf(er *v1alpha1.EvictionRequest, eventType, reason, format string, args ...interface{}) {
	c.recorder.Eventf(er, eventType, reason, format, args...)
}
