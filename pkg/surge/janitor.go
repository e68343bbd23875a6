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

package surge

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
)

// janitorKey is what the janitor looks after: a Deployment with a surge, or
// a pod with a lowered deletion cost.
type janitorKey struct {
	kind      string
	namespace string
	name      string
}

const (
	deploymentKey = "Deployment"
	podKey        = "Pod"
)

// janitor undoes what surges left behind once the interceptor that made
// them no longer holds their request: it scales their Deployments back and
// restores the deletion cost of their pods. Informer events bring it the
// Deployments with a surge and the marked pods; what it cannot watch, a
// request withdrawn, canceled or passed on, it reads each period for as
// long as a surge or a mark lasts.
type janitor struct {
	s      *Surger
	period time.Duration
	queue  workqueue.TypedRateLimitingInterface[janitorKey]

	mu sync.Mutex
	// inProgress counts, by Deployment, the pods this interceptor's surges
	// replace.
	inProgress map[janitorKey]int
}

// RunJanitor runs the janitor until ctx ends. It judges a surge and a mark
// by the interceptor named on them, not by its own name, so that surge
// interceptors of several names (or namespaces) in a cluster agree on what
// is left behind; and it counts the pods a surge of this interceptor
// replaced as they go.
func (s *Surger) RunJanitor(ctx context.Context, period time.Duration) error {
	j := &janitor{
		s: s, period: period, inProgress: map[janitorKey]int{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[janitorKey](),
			workqueue.TypedRateLimitingQueueConfig[janitorKey]{Name: "surge-janitor"}),
	}
	defer j.queue.ShutDown()
	informers := s.cfg.Informers
	deployments, err := informers.Apps().V1().Deployments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    j.enqueueDeployment,
		UpdateFunc: func(_, obj any) { j.enqueueDeployment(obj) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = informers.Apps().V1().Deployments().Informer().RemoveEventHandler(deployments) }()
	pods, err := informers.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    j.enqueuePod,
		UpdateFunc: func(_, obj any) { j.enqueuePod(obj) },
		DeleteFunc: j.podDeleted,
	})
	if err != nil {
		return err
	}
	defer func() { _ = informers.Core().V1().Pods().Informer().RemoveEventHandler(pods) }()
	go wait.UntilWithContext(ctx, j.worker, time.Second)
	<-ctx.Done()
	return nil
}

func (j *janitor) enqueueDeployment(obj any) {
	if dep, ok := obj.(*appsv1.Deployment); ok {
		if _, surging := dep.Annotations[StateAnnotation]; surging {
			j.queue.Add(janitorKey{deploymentKey, dep.Namespace, dep.Name})
		}
	}
}

func (j *janitor) enqueuePod(obj any) {
	if pod, ok := obj.(*corev1.Pod); ok {
		if _, marked := pod.Annotations[OriginalDeletionCostAnnotation]; marked && pod.DeletionTimestamp == nil {
			j.queue.Add(janitorKey{podKey, pod.Namespace, pod.Name})
		}
	}
}

// podDeleted counts a pod this interceptor marked for removal as replaced.
func (j *janitor) podDeleted(obj any) {
	pod, ok := podutil.FromObject(obj)
	if !ok {
		return
	}
	if _, marked := pod.Annotations[OriginalDeletionCostAnnotation]; marked && pod.Annotations[MarkedByAnnotation] == j.s.cfg.Name {
		metrics.Completed.Inc()
	}
}

func (j *janitor) worker(ctx context.Context) {
	for {
		key, quit := j.queue.Get()
		if quit {
			return
		}
		again, err := j.sync(ctx, key)
		switch {
		case err != nil:
			utilruntime.HandleErrorWithContext(ctx, err, "Cleaning up after a surge", "kind", key.kind, "object", klog.KRef(key.namespace, key.name))
			j.queue.AddRateLimited(key)
		case again:
			j.queue.Forget(key)
			j.queue.AddAfter(key, j.period)
		default:
			j.queue.Forget(key)
		}
		j.queue.Done(key)
	}
}

// sync looks after one Deployment or pod and says whether it must be looked
// at again next period.
func (j *janitor) sync(ctx context.Context, key janitorKey) (bool, error) {
	if key.kind == podKey {
		return j.syncPod(ctx, key)
	}
	dep, err := j.s.deployments.Deployments(key.namespace).Get(key.name)
	if apierrors.IsNotFound(err) {
		j.setInProgress(key, 0)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	state, err := currentState(dep)
	if err != nil || state == nil {
		j.setInProgress(key, 0)
		return false, err
	}
	left, err := j.s.cleanUpDeployment(ctx, dep, state)
	if state.Interceptor == j.s.cfg.Name {
		j.setInProgress(key, left)
	}
	return left > 0, err
}

// setInProgress records how many pods the surge of a Deployment replaces.
func (j *janitor) setInProgress(key janitorKey, n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n == 0 {
		delete(j.inProgress, key)
	} else {
		j.inProgress[key] = n
	}
	total := 0
	for _, n := range j.inProgress {
		total += n
	}
	metrics.InProgress.Set(float64(total))
}

// syncPod restores the deletion cost of a marked pod unless the interceptor
// that marked it holds its request under Forbid: a pod keeps the lowered
// cost only while its removal is in flight.
func (j *janitor) syncPod(ctx context.Context, key janitorKey) (bool, error) {
	pod, err := j.s.pods.Pods(key.namespace).Get(key.name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, marked := pod.Annotations[OriginalDeletionCostAnnotation]; !marked || pod.DeletionTimestamp != nil {
		return false, nil
	}
	h, err := j.s.holdingOf(ctx, pod.Namespace, pod.UID, pod.Annotations[MarkedByAnnotation])
	if err != nil || h.forbidden {
		return h.forbidden, err
	}
	if err := j.s.restoreDeletionCost(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	klog.FromContext(ctx).V(2).Info("Restored the deletion cost of a pod whose removal is no longer in flight", "pod", klog.KObj(pod), "held", h.held)
	return false, nil
}
