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

package framework

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// EvictionDeleted is the reason of a RequestEnd whose lifecycle.k8s.io
// Eviction, or our API's EvictionRequest, was deleted before a condition
// said it ended: the garbage collector removes it with its pod, and may do
// so before the controller writes that the pod is gone.
const EvictionDeleted = "EvictionDeleted"

// RequestEnd is how the eviction request of a pod ended, as a watch of
// every version of it saw.
type RequestEnd struct {
	// Reason is why it ended, empty while it has not: our API's Complete
	// condition (PodDeleted, PodTerminated, Canceled); on lifecycle.k8s.io
	// the Eviction's TargetEvicted condition (PodDeleted, PodTerminal) or,
	// when it failed, its Failed condition (CanceledDueToNoRequesters, ...).
	Reason, Message string
	// Turn is the interceptor (responder) whose turn it was last before the
	// end, and TurnCompleted whether it had completed: a request that ended
	// at a participant's uncompleted turn never reached its eviction step.
	Turn          string
	TurnCompleted bool
	// Seen is whether a request of the pod was seen at all.
	Seen bool
	// At is when the watch saw it end.
	At time.Time
}

// FollowRequest follows the eviction request of pod on api from now on,
// our API's EvictionRequest (named after the pod's UID) or lifecycle.k8s.io's
// Eviction of the pod, through every version, so that an end the garbage
// collector removes a moment later is still seen. The returned function
// reports how it ended so far, and fails t if the watch failed.
func (f *Framework) FollowRequest(t testing.TB, api evictionapi.API, pod *corev1.Pod) func() RequestEnd {
	t.Helper()
	var mu sync.Mutex
	var end RequestEnd
	record := func(reason, message, turn string, turnCompleted bool) {
		mu.Lock()
		defer mu.Unlock()
		if end.Reason != "" {
			return
		}
		end.Seen = true
		if reason != "" {
			end.Reason, end.Message, end.At = reason, message, time.Now()
			return
		}
		end.Turn, end.TurnCompleted = turn, turnCompleted
	}
	var failed func() error
	if api == evictionapi.Lifecycle {
		failed = f.followEviction(t, pod, record)
	} else {
		failed = f.followEvictionRequest(t, pod, record)
	}
	return func() RequestEnd {
		t.Helper()
		if err := failed(); err != nil {
			t.Errorf("following the eviction request of pod %s: %v", pod.Name, err)
		}
		mu.Lock()
		defer mu.Unlock()
		return end
	}
}

// followEvictionRequest follows our API's EvictionRequest of pod.
func (f *Framework) followEvictionRequest(t testing.TB, pod *corev1.Pod, record func(reason, message, turn string, completed bool)) func() error {
	client := f.Clientset.CoordinationV1alpha1().EvictionRequests(pod.Namespace)
	byName := fields.OneTermEqualSelector("metadata.name", string(pod.UID)).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = byName
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = byName
			return client.Watch(ctx, opts)
		},
	}
	return follow(t, lw, func(event watch.EventType, obj runtime.Object) {
		er, ok := obj.(*v1alpha1.EvictionRequest)
		if !ok {
			return
		}
		if event == watch.Deleted && coordinationutil.CompletionReason(er) == "" {
			record(EvictionDeleted, "the EvictionRequest was deleted", "", false)
			return
		}
		message := ""
		if c := coordinationutil.GetCompleteCondition(er); c != nil {
			message = c.Message
		}
		record(coordinationutil.CompletionReason(er), message, ptr.Deref(er.Status.ActiveInterceptorName, ""), er.Status.ActiveInterceptorCompleted)
	})
}

// followEviction follows lifecycle.k8s.io's Eviction of pod.
func (f *Framework) followEviction(t testing.TB, pod *corev1.Pod, record func(reason, message, turn string, completed bool)) func() error {
	client := f.Kube.LifecycleV1alpha1().Evictions(pod.Namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Watch(ctx, opts)
		},
	}
	target := lifecycleutil.TargetKey(pod.Namespace, pod.UID)
	var mu sync.Mutex
	var turn string
	return follow(t, lw, func(event watch.EventType, obj runtime.Object) {
		ev, ok := obj.(*lifecyclev1alpha1.Eviction)
		if !ok || lifecycleutil.EvictionTargetKey(ev) != target {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if event == watch.Deleted {
			// The garbage collector removes the Eviction with the
			// EvictionRequests of a deleted pod, whether or not the
			// controller marked it TargetEvicted first.
			record(EvictionDeleted, "the Eviction was deleted", "", false)
			return
		}
		for _, r := range ev.Status.TargetResponders {
			if r.State == lifecyclev1alpha1.ResponderStateActive {
				turn = r.Name
			}
		}
		completed := false
		if r := lifecycleutil.TargetResponder(ev, turn); r != nil {
			completed = r.State == lifecyclev1alpha1.ResponderStateCompleted
		}
		reason, message := "", ""
		for _, t := range []lifecyclev1alpha1.EvictionConditionType{lifecyclev1alpha1.EvictionConditionTargetEvicted, lifecyclev1alpha1.EvictionConditionFailed} {
			if c := lifecycleutil.Condition(ev.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue && reason == "" {
				reason, message = c.Reason, c.Message
			}
		}
		record(reason, message, turn, completed)
	})
}

// String says how the request ended, for test failures.
func (e RequestEnd) String() string {
	if !e.Seen {
		return "no request seen"
	}
	return fmt.Sprintf("reason %q (%s), last turn %q (completed %t)", e.Reason, e.Message, e.Turn, e.TurnCompleted)
}
