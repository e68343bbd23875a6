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

package requester

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// ErrRequestDeleted is Wait's answer when the EvictionRequest was deleted
// before it completed while its pod still runs: someone canceled it by
// deleting it.
var ErrRequestDeleted = errors.New("the EvictionRequest was deleted before it completed")

// Result is how an EvictionRequest ended.
type Result struct {
	// Reason is why: on coordination.k8s.io the reason of the Complete
	// condition (v1alpha1.CompleteReasonPodDeleted, CompleteReasonPodTerminated
	// or CompleteReasonCanceled); on lifecycle.k8s.io that of the True
	// TargetEvicted condition (PodDeleted, PodTerminal) or Failed condition
	// (CanceledDueToNoRequesters, EvictionInvalid).
	Reason string
	// Message is the message of that condition.
	Message string
	// EvictionRequest is the coordination.k8s.io request as it completed;
	// nil when it was deleted together with its pod before it was seen
	// complete, or on lifecycle.k8s.io.
	EvictionRequest *v1alpha1.EvictionRequest
	// LifecycleRequest is the lifecycle.k8s.io request as it ended; nil
	// when it was deleted together with its pod, or on coordination.k8s.io.
	LifecycleRequest *lifecyclev1alpha1.EvictionRequest
}

// Evicted is true when the pod left: deleted or terminated.
func (r Result) Evicted() bool {
	switch r.Reason {
	case v1alpha1.CompleteReasonPodDeleted, v1alpha1.CompleteReasonPodTerminated, string(lifecyclev1alpha1.EvictionConditionReasonPodTerminal):
		return true
	}
	return false
}

// Wait waits until the EvictionRequest of pod is complete, or ctx ends. A
// request the garbage collector deleted with its pod before it was seen
// complete counts as complete with reason PodDeleted; a request deleted
// while its pod runs is ErrRequestDeleted, and a pod that has no request
// at all is a NotFound error.
func (r *Requester) Wait(ctx context.Context, pod *corev1.Pod) (Result, error) {
	client := r.requests.EvictionRequests(pod.Namespace)
	name := string(pod.UID)
	var result Result
	seen, err := watchUntil(ctx, r.client, r.opts.CallTimeout, pod.Namespace, name, &v1alpha1.EvictionRequest{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return client.List(ctx, o) }, client.Watch,
		func(er *v1alpha1.EvictionRequest) bool {
			if c := coordinationutil.GetCompleteCondition(er); coordinationutil.IsComplete(er) {
				result = Result{Reason: c.Reason, Message: c.Message, EvictionRequest: er}
				return true
			}
			return false
		})
	if err != nil || result.Reason != "" {
		return result, err
	}
	return missingResult(ctx, r.pods, r.opts.CallTimeout, pod, seen, v1alpha1.Resource("evictionrequests"))
}

// Wait waits until the requester's EvictionRequest of pod has an outcome,
// or ctx ends: the pod was evicted, the request is invalid, or the
// eviction was canceled because every requester withdrew. An Eviction that
// failed because no responder evicted the pod is no outcome: while the
// request wants the eviction, the controller starts another. A request
// deleted with its pod counts as evicted; one deleted while its pod runs is
// ErrRequestDeleted.
func (l *Lifecycle) Wait(ctx context.Context, pod *corev1.Pod) (Result, error) {
	client := l.client.LifecycleV1alpha1().EvictionRequests(pod.Namespace)
	var result Result
	seen, err := watchUntil(ctx, l.client, l.opts.CallTimeout, pod.Namespace, l.RequestName(pod.UID), &lifecyclev1alpha1.EvictionRequest{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return client.List(ctx, o) }, client.Watch,
		func(er *lifecyclev1alpha1.EvictionRequest) bool {
			c := outcomeCondition(er)
			if c != nil {
				result = Result{Reason: c.Reason, Message: c.Message, LifecycleRequest: er}
			}
			return c != nil
		})
	if err != nil || result.Reason != "" {
		return result, err
	}
	return missingResult(ctx, l.client.CoreV1(), l.opts.CallTimeout, pod, seen, lifecyclev1alpha1.Resource("evictionrequests"))
}

// outcomeCondition is the condition that says er's outcome: TargetEvicted
// True, or Failed True for a reason that ends the eviction; nil while the
// eviction goes on.
func outcomeCondition(er *lifecyclev1alpha1.EvictionRequest) *metav1.Condition {
	if c := lifecycleutil.Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted); c != nil && c.Status == metav1.ConditionTrue {
		return c
	}
	c := lifecycleutil.Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason == string(lifecyclev1alpha1.EvictionConditionReasonNoFurtherResponder) {
		return nil
	}
	return c
}

// watchUntil watches the object name of namespace, listed and watched by
// list and watchFn, until done is true of it or it is deleted, and returns
// whether it was seen at all. watchList is asked whether the server speaks
// the WatchList protocol.
func watchUntil[T runtime.Object](ctx context.Context, watchList any, callTimeout time.Duration, namespace, name string, obj T,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), done func(T) bool) (bool, error) {
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			options.FieldSelector = selector
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			return list(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.FieldSelector = selector
			return watchFn(ctx, options)
		},
	}
	seen := false
	missing := func(store cache.Store) (bool, error) {
		_, exists, err := store.GetByKey(namespace + "/" + name)
		return !exists, err
	}
	_, err := watchtools.UntilWithSync(ctx, cache.ToListWatcherWithWatchListSemantics(lw, watchList), obj, missing, func(event watch.Event) (bool, error) {
		t, ok := event.Object.(T)
		if !ok {
			return false, nil
		}
		if accessor, err := apimeta.Accessor(t); err != nil || accessor.GetName() != name {
			return false, nil
		}
		seen = true
		return event.Type == watch.Deleted || done(t), nil
	})
	return seen, err
}

// missingResult judges a request that is gone, or never was, by whether
// its pod is gone: the garbage collector deletes the request with its pod.
func missingResult(ctx context.Context, pods corev1client.PodsGetter, callTimeout time.Duration, pod *corev1.Pod, seen bool, resource schema.GroupResource) (Result, error) {
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	current, err := pods.Pods(pod.Namespace).Get(callCtx, pod.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || (err == nil && current.UID != pod.UID):
		return Result{Reason: v1alpha1.CompleteReasonPodDeleted, Message: fmt.Sprintf("Pod %s was deleted, and its EvictionRequest with it.", pod.Name)}, nil
	case err == nil && current.DeletionTimestamp != nil:
		// A foreground deletion of the pod deletes its dependents first.
		return Result{Reason: v1alpha1.CompleteReasonPodDeleted, Message: fmt.Sprintf("Pod %s is being deleted, and its EvictionRequest was deleted with it.", pod.Name)}, nil
	case err != nil:
		return Result{}, err
	case seen:
		return Result{}, ErrRequestDeleted
	}
	return Result{}, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, apierrors.NewNotFound(resource, string(pod.UID)))
}
