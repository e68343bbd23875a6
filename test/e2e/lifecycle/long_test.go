//go:build long

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

package lifecycle

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// A responder whose turn started and that never heartbeats keeps its turn
// for the 20 minutes kube-apiserver holds it to, then the controller
// interrupts it and hands the turn to the next responder, which evicts
// the pod. It takes more than 20 minutes: make test-long runs it, not make
// test.
func TestLongAResponderThatNeverHeartbeatsIsInterruptedAfterTwentyMinutes(t *testing.T) {
	const (
		silent = "silent.example.com/responder"
		next   = "next.example.com/responder"
	)
	ns := f.NewNamespace(t)
	pod := podWith(t, ns, "db-0",
		corev1.EvictionResponder{Name: silent, Priority: ptr.To[int32](2000)},
		corev1.EvictionResponder{Name: next, Priority: ptr.To[int32](1000)})
	er := framework.RequestEviction(t, keptRequester(t), pod)
	started := f.WaitForEviction(t, pod, "the silent responder's turn", framework.ResponderIs(silent, lifecyclev1alpha1.ResponderStateActive))
	f.StartResponder(t, ns, next, func(context.Context, *interceptor.Request) (interceptor.Result, error) {
		return interceptor.Complete("handed over"), nil
	})

	var ev *lifecyclev1alpha1.Eviction
	err := utilwait.PollUntilContextTimeout(t.Context(), 10*time.Second, lifecycleutil.HeartbeatDeadline+5*time.Minute, false, func(ctx context.Context) (bool, error) {
		current, err := f.Kube.LifecycleV1alpha1().Evictions(ns).Get(ctx, started.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ev = current
		return framework.ResponderIs(silent, lifecyclev1alpha1.ResponderStateInterrupted)(ev) == nil, nil
	})
	if err != nil {
		t.Fatalf("the silent responder was not interrupted within %s of its turn: %v", lifecycleutil.HeartbeatDeadline+5*time.Minute, err)
	}
	start := lifecycleutil.ResponderStatus(started, silent).StartTime.Time
	f.WaitForEvents(t, ns, "Eviction", ev.Name, lifecycle.EventResponderTimedOut)
	if interrupted := time.Now(); interrupted.Before(start.Add(lifecycleutil.HeartbeatDeadline)) {
		t.Errorf("interrupted at %s, before the heartbeat deadline %s after its start at %s", interrupted, lifecycleutil.HeartbeatDeadline, start)
	}
	evicted(t, pod, er)
	if status := lifecycleutil.ResponderStatus(f.WaitForEviction(t, pod, "the next responder's completion",
		framework.ResponderIs(next, lifecyclev1alpha1.ResponderStateCompleted)), next); status == nil || status.CompletionTime == nil {
		t.Errorf("the next responder's entry %+v, want its completion", status)
	}
}
