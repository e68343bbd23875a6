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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// term is one run of the interceptor: its own watch, queue and holds, so
// that nothing of a lost leadership term acts in the next.
type term[T object] struct {
	cfg      Config
	api      api[T]
	queue    workqueue.TypedDelayingInterface[string]
	limiter  workqueue.TypedRateLimiter[string]
	indexer  cache.Indexer
	recorder record.EventRecorder

	mu    sync.Mutex
	holds map[string]*hold[T]
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

func runTerm[T object](ctx context.Context, cfg Config, a api[T]) error {
	logger := klog.FromContext(ctx)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cfg.KubeClient.CoreV1().Events("")})
	defer broadcaster.Shutdown()

	w := a.watch()
	t := &term[T]{
		cfg:       cfg,
		api:       a,
		indexer:   w.informer.GetIndexer(),
		recorder:  broadcaster.NewRecorder(a.scheme(), corev1.EventSource{Component: cfg.Name}),
		holds:     map[string]*hold[T]{},
		notBefore: map[string]time.Time{},
		passedOn:  map[string]bool{},
		// A Handler that fails runs again after 1s, doubling to 5 minutes.
		limiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 5*time.Minute),
		queue:   workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "interceptor", Clock: cfg.Clock}),
	}
	enqueue := func(obj any) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Cannot get the key of an object")
			return
		}
		t.queue.Add(key)
	}
	if _, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
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
		w.shutdown()
		logger.Info("Interceptor stopped")
	}()
	w.start(ctx.Done())
	if !cache.WaitForNamedCacheSyncWithContext(ctx, w.informer.HasSynced) {
		return ctx.Err()
	}
	logger.Info("Interceptor started", "namespace", cfg.Namespace)
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

func (t *term[T]) worker(ctx context.Context) {
	for {
		key, quit := t.queue.Get()
		if quit {
			return
		}
		t.sync(ctx, key)
		t.queue.Done(key)
	}
}

// cached is the object of key in the cache; found is false when it is not
// there.
func (t *term[T]) cached(key string) (obj T, found bool, err error) {
	item, exists, err := t.indexer.GetByKey(key)
	if err != nil || !exists {
		return obj, false, err
	}
	obj, ok := item.(T)
	return obj, ok, nil
}

// sync starts a hold on a request the interceptor became active on, and
// ends the hold of a request it no longer holds.
func (t *term[T]) sync(ctx context.Context, key string) {
	obj, found, err := t.cached(key)
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Reading from the cache", "key", key)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.holds[key]
	if !t.api.owns(obj) {
		delete(t.passedOn, key)
		delete(t.notBefore, key)
		t.limiter.Forget(key)
		if h != nil {
			if found {
				h.observe(obj)
			}
			h.lose(t.api.lossReason(obj))
		}
		return
	}
	if h != nil {
		h.observe(obj)
		return
	}
	if t.passedOn[key] || t.cfg.Clock.Now().Before(t.notBefore[key]) {
		return
	}
	h = newHold(ctx, t, key, obj)
	t.holds[key] = h
	t.running.Add(1)
	go h.run()
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
func (t *term[T]) released(h *hold[T], how ending) {
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
		if obj, found, err := t.cached(h.key); err == nil && found && t.api.owns(obj) {
			t.passedOn[h.key] = true
		}
		fallthrough
	default:
		t.limiter.Forget(h.key)
		delete(t.notBefore, h.key)
	}
	t.mu.Unlock()
	t.running.Done()
}
