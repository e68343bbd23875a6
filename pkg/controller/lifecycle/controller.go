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

// Package lifecycle is the evictionrequest-controller of Kubernetes 1.37's
// lifecycle.k8s.io/v1alpha1 API, which kube-apiserver serves but which no
// Kubernetes release runs a controller for. It turns the EvictionRequests
// of a pod into one Eviction, hands the Eviction from responder to
// responder in priority order (on completion, or when a responder misses
// its heartbeat deadline), cancels it when every requester withdrew, and
// sets the TargetEvicted and Failed conditions on the Eviction and its
// EvictionRequests. The rules it shares with the controller of
// coordination.k8s.io/v1alpha1 are in pkg/controller/eviction.
//
// Three queues, as in the upstream pull request: Evictions (their status:
// requesters, responders, conditions), EvictionRequests (validation, the
// Eviction to create, the conditions mirrored from it) and the metadata of
// Evictions (the participant labels and the owner references to the
// requests), which a status write cannot change.
package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	"github.com/evictionrequest/apiserver/pkg/controller"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/util/lifecycleindex"
)

// PodAnnotationsRead are the pod annotations the controller reads of the
// pods of its cache: none (responders are declared in the pod's spec).
var PodAnnotationsRead []string

const (
	// ControllerName names the controller in events, logs and
	// evictionrequest-controller's --controllers: the name the API's
	// documentation gives it, and kube-controller-manager's from 1.38 on.
	ControllerName = "evictionrequest-controller"
	// FieldManager is the field manager of its writes. It differs from
	// kube-controller-manager's, ControllerName, so that managedFields tell
	// whose controller wrote what, and that the two never share fields
	// without a conflict (stepaside).
	FieldManager = "evictionrequest.github.io/evictionrequest-controller"
	// CompletionGrace is how long after a pod stopped (podutil.TerminalTime:
	// its deletion or its containers' finish; else when the controller first
	// saw it gone or terminal) the controller waits for the active responder
	// to report completion before it declares the pod evicted and the
	// responder Interrupted, as the upstream pull request does.
	CompletionGrace = 5 * time.Second
	// maxRequesters is the most status.requesters the API accepts.
	maxRequesters = 100
)

// Options tune a Controller; the zero value is upstream's behaviour.
type Options struct {
	// HeartbeatDeadline is how long an active responder may go without a
	// heartbeat; lifecycleutil.HeartbeatDeadline (20 minutes) when zero.
	// kube-apiserver refuses to end a turn sooner (ValidateDeadline).
	HeartbeatDeadline time.Duration
	// CallTimeout bounds every API call; 30s when zero.
	CallTimeout time.Duration
	// EventClient records the events; the client when nil.
	EventClient kubernetes.Interface
}

// Controller reconciles the Evictions and EvictionRequests of
// lifecycle.k8s.io/v1alpha1 with their pods.
type Controller struct {
	client            kubernetes.Interface
	eventClient       kubernetes.Interface
	callTimeout       time.Duration
	heartbeatDeadline time.Duration

	evictionLister  lifecyclelisters.EvictionLister
	requestLister   lifecyclelisters.EvictionRequestLister
	podLister       corelisters.PodLister
	evictionIndexer cache.Indexer
	requestIndexer  cache.Indexer
	synced          []cache.InformerSynced
	// handlers are its registrations on the informers, removed when it
	// stops: a process's informers may outlive its term.
	handlers controller.Handlers
	// written holds the Evictions whose status the controller applied
	// until the cache has them: a sync of the same key that comes before
	// the informer's update must not decide from the older copy, and apply
	// (and report) the same step again.
	written cache.MutationCache

	// evictions syncs the status of Evictions, requests the status of
	// EvictionRequests and the Evictions they need, metadata the labels
	// and owner references of Evictions.
	evictions, requests, metadata workqueue.TypedRateLimitingInterface[string]

	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	clock       clock.WithTicker

	// endedAt is when the controller first saw the pod of an Eviction (by
	// key) gone or terminal, for the grace of a pod whose status does not
	// say when it stopped. A restart forgets it and grants the grace again.
	endedMu sync.Mutex
	endedAt map[string]time.Time
}

// writtenCacheSize bounds the Evictions the controller remembers having
// written (the least recently written go first; each is needed only for
// the moment the informer takes to catch up, and held until pushed out).
const writtenCacheSize = 128

// NewController returns a controller over the given informers, which must
// not have started: it indexes the Evictions and EvictionRequests by
// target. The clock is injectable for tests.
func NewController(ctx context.Context, client kubernetes.Interface, evictionInformer lifecycleinformers.EvictionInformer,
	requestInformer lifecycleinformers.EvictionRequestInformer, podInformer coreinformers.PodInformer,
	clock clock.WithTicker, opts Options) (*Controller, error) {
	if opts.HeartbeatDeadline == 0 {
		opts.HeartbeatDeadline = lifecycleutil.HeartbeatDeadline
	}
	if err := ValidateDeadline(opts.HeartbeatDeadline); err != nil {
		return nil, err
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = evictionapi.DefaultCallTimeout
	}
	if opts.EventClient == nil {
		opts.EventClient = client
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	newQueue := func(name string) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: clock})
	}
	c := &Controller{
		client:            client,
		eventClient:       opts.EventClient,
		callTimeout:       opts.CallTimeout,
		heartbeatDeadline: opts.HeartbeatDeadline,
		evictionLister:    evictionInformer.Lister(),
		requestLister:     requestInformer.Lister(),
		podLister:         podInformer.Lister(),
		evictionIndexer:   evictionInformer.Informer().GetIndexer(),
		written: cache.NewIntegerResourceVersionMutationCacheWithOptions(klog.FromContext(ctx), evictionInformer.Informer().GetIndexer(),
			cache.MutationCacheOptions{TTL: 30 * time.Second, MaxCacheSize: writtenCacheSize}),
		requestIndexer: requestInformer.Informer().GetIndexer(),
		synced: []cache.InformerSynced{evictionInformer.Informer().HasSynced,
			requestInformer.Informer().HasSynced, podInformer.Informer().HasSynced},
		// kube-controller-manager's names of its controller's queues: the
		// workqueue metrics read the same whichever runs.
		evictions:   newQueue(ControllerName + "_eviction"),
		requests:    newQueue(ControllerName + "_eviction_request"),
		metadata:    newQueue(ControllerName + "_eviction_metadata_refresh"),
		broadcaster: broadcaster,
		recorder:    broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: ControllerName}),
		clock:       clock,
		endedAt:     map[string]time.Time{},
	}
	if err := c.addIndexers(evictionInformer.Informer(), requestInformer.Informer()); err != nil {
		return nil, err
	}
	if err := c.addHandlers(ctx, evictionInformer.Informer(), requestInformer.Informer(), podInformer.Informer()); err != nil {
		c.Close(ctx)
		return nil, err
	}
	return c, nil
}

// RegisterInformers asks factory for the informers the controller reads,
// with their indexes, before it starts: a process that shares its
// informers with every term starts them once.
func RegisterInformers(factory informers.SharedInformerFactory) error {
	factory.Core().V1().Pods().Informer()
	lifecycleInformers := factory.Lifecycle().V1alpha1()
	if err := lifecycleindex.AddEvictions(lifecycleInformers.Evictions().Informer()); err != nil {
		return err
	}
	return lifecycleindex.AddRequests(lifecycleInformers.EvictionRequests().Informer())
}

// Close releases what NewController took, for a controller that will not
// run: its handlers on informers that outlive it.
func (c *Controller) Close(ctx context.Context) {
	c.handlers.RemoveAll(ctx)
	c.broadcaster.Shutdown()
}

// ValidateDeadline checks a heartbeat deadline: kube-apiserver v1.37 lets
// no one end a responder's turn sooner than 20 minutes after its last
// heartbeat (less 30 s of clock skew), so a shorter deadline could never be
// applied. A longer one can.
func ValidateDeadline(d time.Duration) error {
	if d < lifecycleutil.HeartbeatDeadline {
		return fmt.Errorf("heartbeat deadline %s is shorter than %s, which kube-apiserver enforces for lifecycle.k8s.io/v1alpha1 Evictions", d, lifecycleutil.HeartbeatDeadline)
	}
	return nil
}

// Run syncs with workers goroutines per queue until ctx ends, then waits
// for them.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)
	c.broadcaster.StartStructuredLogging(3)
	c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.eventClient.CoreV1().Events("")})
	defer c.broadcaster.Shutdown()
	defer c.handlers.RemoveAll(ctx)
	queues := []controller.Worker{
		{Queue: c.evictions, Sync: c.syncEviction, Kind: "Eviction"},
		{Queue: c.requests, Sync: c.syncRequest, Kind: "EvictionRequest"},
		{Queue: c.metadata, Sync: c.syncMetadata, Kind: "Eviction metadata"},
	}
	logger.Info("Starting the eviction request controller", "workers", workers, "heartbeatDeadline", c.heartbeatDeadline)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		for _, q := range queues {
			q.Queue.ShutDown()
		}
		return
	}
	// The gauges count from the caches: only once they are whole.
	metrics.SetSource(c)
	defer metrics.SetSource(nil)
	controller.RunWorkers(ctx, workers, nil, queues...)
	logger.Info("Shut down the eviction request controller")
}
