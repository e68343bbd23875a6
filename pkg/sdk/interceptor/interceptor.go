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

package interceptor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	erutil "github.com/evictionrequest/apiserver/pkg/api/v1alpha1/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	erscheme "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/scheme"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	coordinationlisters "github.com/evictionrequest/apiserver/pkg/generated/listers/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

// DefaultCallTimeout bounds each API call of an interceptor unless
// Config.CallTimeout says otherwise.
const DefaultCallTimeout = 30 * time.Second

// Reasons of the events an interceptor records on EvictionRequests.
const (
	// EventStarted: the interceptor took the request and started working.
	EventStarted = "InterceptorStarted"
	// EventCompleted: the interceptor did its part and passed the request on.
	EventCompleted = "InterceptorCompleted"
	// EventDeclined: the interceptor does not handle the pod and passed the
	// request on.
	EventDeclined = "InterceptorDeclined"
	// EventPodTerminated: the interceptor terminated the pod and waits for
	// it to be gone.
	EventPodTerminated = "InterceptorTerminatedPod"
	// EventFailed: the Handler failed; it runs again with backoff.
	EventFailed = "InterceptorFailed"
)

// Config configures an interceptor.
type Config struct {
	// Name is the interceptor's name, as pods list it in their
	// evictionrequest.coordination.k8s.io/interceptors annotation.
	Name string
	// Handler does the work.
	Handler Handler
	// Client reaches the EvictionRequest API (through kube-apiserver).
	Client versioned.Interface
	// KubeClient records events and, with LeaderElection, holds the Lease.
	KubeClient kubernetes.Interface
	// Namespace limits the interceptor to one namespace; empty is all.
	Namespace string
	// HeartbeatPeriod is how often the interceptor heartbeats while it
	// holds a request. Zero is a tenth of the request's
	// spec.heartbeatDeadlineSeconds; more than half of it is cut to half.
	HeartbeatPeriod time.Duration
	// CallTimeout bounds every API call; DefaultCallTimeout when zero.
	CallTimeout time.Duration
	// Workers is the number of requests looked at in parallel (Handlers
	// run in goroutines of their own); 2 when zero.
	Workers int
	// LeaderElection, when set, runs the interceptor only while it holds
	// this Lease, so that several replicas are safe.
	LeaderElection *leaderelect.Config
	// Clock is the interceptor's notion of time; the real clock when nil.
	Clock clock.WithTicker
}

// Interceptor answers the EvictionRequests whose active interceptor is its name.
type Interceptor struct {
	cfg Config
}

// New checks cfg and returns an interceptor.
func New(cfg Config) (*Interceptor, error) {
	var errs []error
	if msgs := validation.IsDNS1123Subdomain(cfg.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("interceptor name %q: %v", cfg.Name, msgs))
	}
	if cfg.Handler == nil {
		errs = append(errs, errors.New("a Handler is required"))
	}
	if cfg.Client == nil || cfg.KubeClient == nil {
		errs = append(errs, errors.New("the Client and KubeClient options are required"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Interceptor{cfg: cfg}, nil
}

// Run answers EvictionRequests until ctx ends, then cancels the Handlers
// and waits for them. With leader election it acts only while it leads.
func (i *Interceptor) Run(ctx context.Context) error {
	ctx = klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), "interceptor", i.cfg.Name))
	if i.cfg.LeaderElection == nil {
		return i.runTerm(ctx)
	}
	return leaderelect.Run(ctx, i.cfg.KubeClient.CoordinationV1(), *i.cfg.LeaderElection, func(ctx context.Context) {
		if err := i.runTerm(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Interceptor term failed")
		}
	})
}

// term is one run of the interceptor: its own watch, queue and holds, so
// that nothing of a lost leadership term acts in the next.
type term struct {
	cfg      Config
	queue    workqueue.TypedDelayingInterface[string]
	limiter  workqueue.TypedRateLimiter[string]
	lister   coordinationlisters.EvictionRequestLister
	recorder record.EventRecorder

	mu    sync.Mutex
	holds map[string]*hold
	// notBefore holds back a new run of a Handler that failed until its
	// backoff ends, whatever events arrive meanwhile.
	notBefore map[string]time.Time
	// passedOn marks the requests the interceptor passed on until the
	// cache shows it: an older version still in the cache must not start
	// the Handler again.
	passedOn map[string]bool
	// running counts the goroutines of holds.
	running sync.WaitGroup
}

func (i *Interceptor) runTerm(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: i.cfg.KubeClient.CoreV1().Events("")})
	defer broadcaster.Shutdown()

	// Only the requests this interceptor is the active one of reach it.
	selector := fields.OneTermEqualSelector(v1alpha1.ActiveInterceptorNameField, i.cfg.Name).String()
	factory := externalversions.NewSharedInformerFactoryWithOptions(i.cfg.Client, 0,
		externalversions.WithNamespace(i.cfg.Namespace),
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }))
	informer := factory.Coordination().V1alpha1().EvictionRequests()
	t := &term{
		cfg:       i.cfg,
		lister:    informer.Lister(),
		recorder:  broadcaster.NewRecorder(erscheme.Scheme, corev1.EventSource{Component: i.cfg.Name}),
		holds:     map[string]*hold{},
		notBefore: map[string]time.Time{},
		passedOn:  map[string]bool{},
		// A Handler that fails runs again after 1s, doubling to 5 minutes.
		limiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 5*time.Minute),
		queue:   workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "interceptor", Clock: i.cfg.Clock}),
	}
	enqueue := func(obj any) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Cannot get the key of an EvictionRequest")
			return
		}
		t.queue.Add(key)
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return err
	}

	var workers sync.WaitGroup
	defer func() {
		t.queue.ShutDown()
		workers.Wait()
		// The term's context is the parent of every hold's: they are
		// ending; wait until their Handlers returned.
		t.running.Wait()
		factory.Shutdown()
		logger.Info("Interceptor stopped")
	}()
	factory.Start(ctx.Done())
	if !cache.WaitForNamedCacheSyncWithContext(ctx, informer.Informer().HasSynced) {
		return ctx.Err()
	}
	logger.Info("Interceptor started", "namespace", i.cfg.Namespace)
	for range t.cfg.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			wait.UntilWithContext(ctx, t.worker, time.Second)
		}()
	}
	<-ctx.Done()
	return nil
}

func (t *term) worker(ctx context.Context) {
	for {
		key, quit := t.queue.Get()
		if quit {
			return
		}
		t.sync(ctx, key)
		t.queue.Done(key)
	}
}

// sync starts a hold on a request the interceptor became active on, and
// ends the hold of a request it no longer holds.
func (t *term) sync(ctx context.Context, key string) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return
	}
	er, err := t.lister.EvictionRequests(namespace).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		utilruntime.HandleErrorWithContext(ctx, err, "Reading an EvictionRequest from the cache", "evictionRequest", key)
		return
	}
	if apierrors.IsNotFound(err) {
		er = nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.holds[key]
	if !t.owns(er) {
		delete(t.passedOn, key)
		delete(t.notBefore, key)
		t.limiter.Forget(key)
		if h != nil {
			if er != nil {
				h.observe(er)
			}
			h.lose(lossReason(er, t.cfg.Name))
		}
		return
	}
	if h != nil {
		h.observe(er)
		return
	}
	if t.passedOn[key] || t.cfg.Clock.Now().Before(t.notBefore[key]) {
		return
	}
	h = newHold(ctx, t, key, er)
	t.holds[key] = h
	t.running.Add(1)
	go h.run()
}

// owns is true while er is the interceptor's to work on: it is the active
// interceptor, has not completed its turn, and the request is not complete.
func (t *term) owns(er *v1alpha1.EvictionRequest) bool {
	return er != nil && er.Spec.Target.PodRef != nil && erutil.IsHeldBy(er, t.cfg.Name)
}

// lossReason says, for the log, why the interceptor no longer holds er.
func lossReason(er *v1alpha1.EvictionRequest, name string) string {
	switch {
	case er == nil:
		return "the request was deleted or passed to another interceptor"
	case erutil.IsComplete(er):
		return "the request is complete"
	case erutil.ActiveInterceptor(er) != name:
		return "the request was passed to another interceptor"
	case er.Status.ActiveInterceptorCompleted:
		return "the interceptor's turn is complete"
	}
	return "unknown"
}

// ending says how a hold ended.
type ending int

const (
	// endLost: the interceptor lost the request, or stops.
	endLost ending = iota
	// endPassedOn: the interceptor passed the request on.
	endPassedOn
	// endFailed: the Handler or a write failed; it runs again after a backoff.
	endFailed
)

// released is called by a hold that ended: it forgets the hold and, when
// it failed, looks at the request again after a backoff.
func (t *term) released(h *hold, how ending) {
	t.mu.Lock()
	if t.holds[h.key] == h {
		delete(t.holds, h.key)
	}
	switch how {
	case endFailed:
		delay := t.limiter.When(h.key)
		t.notBefore[h.key] = t.cfg.Clock.Now().Add(delay)
		t.queue.AddAfter(h.key, delay)
	case endPassedOn:
		// Until the cache shows the hand-back, a stale copy there must
		// not start the Handler again.
		if namespace, name, err := cache.SplitMetaNamespaceKey(h.key); err == nil {
			if er, err := t.lister.EvictionRequests(namespace).Get(name); err == nil && t.owns(er) {
				t.passedOn[h.key] = true
			}
		}
		fallthrough
	default:
		t.limiter.Forget(h.key)
		delete(t.notBefore, h.key)
	}
	t.mu.Unlock()
	t.running.Done()
}
