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
	"testing"
	"testing/synctest"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

const responder = "migrator.example.com/db"

// activeEviction is the Eviction of pod db-0 whose active responder is
// responder, labelled as the controller labels it.
func activeEviction() *lifecyclev1alpha1.Eviction {
	pod := wrappers.MakePod("db-0").Obj()
	return wrappers.MakeEviction("pod-1-db-0", pod).Label(responder, string(lifecyclev1alpha1.EvictionParticipantRoleResponder)).
		TargetResponder(responder, 500, lifecyclev1alpha1.ResponderStateActive).
		TargetResponder(lifecycleutil.Evictor, lifecycleutil.EvictorPriority, lifecyclev1alpha1.ResponderStateInactive).
		Started(responder, start).ResponderMessage(responder, "step 2 of 3").Obj()
}

// runResponder runs a responder on lifecycle.k8s.io over kube until the
// test ends.
func runResponder(t *testing.T, kube *k8sfake.Clientset, handle Handler) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	i, err := New(Config{Name: responder, API: evictionapi.Lifecycle, KubeClient: kube, Handler: handle, Clock: testingclock.NewFakeClock(start.Add(time.Minute))})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, ctx, cancel, i)
}

// A Handler runs unchanged as a responder: it sees the pod and the message
// of its previous run, its reports land in its own entry of
// status.responders, and completing sets the entry's completionTime.
func TestResponderCompletesItsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kube := k8sfake.NewClientset(activeEviction())
		seen := make(chan string, 1)
		runResponder(t, kube, func(ctx context.Context, req *Request) (Result, error) {
			seen <- req.Pod().Name + ": " + req.Message()
			expected := start.Add(time.Hour)
			if err := req.Report(ctx, Progress{Message: "copying", ExpectedFinishTime: &expected}); err != nil {
				return Result{}, err
			}
			return Complete("data moved"), nil
		})
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		if got := <-seen; got != "db-0: step 2 of 3" {
			t.Errorf("the handler saw %q, want the pod and the previous message", got)
		}
		ev, err := kube.LifecycleV1alpha1().Evictions("shop").Get(t.Context(), "pod-1-db-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status := lifecycleutil.ResponderStatus(ev, responder)
		if status == nil || status.CompletionTime == nil || ptr.Deref(status.Message, "") != "data moved" ||
			status.HeartbeatTime == nil || status.StartTime == nil || !status.StartTime.Time.Equal(start) || status.ExpectedCompletionTime != nil {
			t.Errorf("the responder's entry is %+v, want completed with its message, its heartbeat and the controller's start time", status)
		}
	})
}

// A responder that is no longer active (Interrupted) loses the Eviction:
// the Handler's context is canceled.
func TestResponderLosesAnInterruptedTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kube := k8sfake.NewClientset(activeEviction())
		canceled := make(chan struct{})
		runResponder(t, kube, func(ctx context.Context, req *Request) (Result, error) {
			<-ctx.Done()
			close(canceled)
			return Result{}, ctx.Err()
		})
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		ev, err := kube.LifecycleV1alpha1().Evictions("shop").Get(t.Context(), "pod-1-db-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev.Status.TargetResponders[0].State = lifecyclev1alpha1.ResponderStateInterrupted
		ev.Status.TargetResponders[1].State = lifecyclev1alpha1.ResponderStateActive
		if _, err := kube.LifecycleV1alpha1().Evictions("shop").UpdateStatus(t.Context(), ev, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-canceled:
		default:
			t.Error("the handler still runs after its turn was interrupted")
		}
	})
}

// A responder whose Handler terminated the pod completes its turn at once:
// the controller would interrupt a turn kept past the pod's removal.
func TestResponderThatTerminatedThePodCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kube := k8sfake.NewClientset(activeEviction())
		runResponder(t, kube, func(ctx context.Context, req *Request) (Result, error) {
			return Terminated("Deployment db was scaled back"), nil
		})
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		ev, err := kube.LifecycleV1alpha1().Evictions("shop").Get(t.Context(), "pod-1-db-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status := lifecycleutil.ResponderStatus(ev, responder)
		if status == nil || status.CompletionTime == nil || ptr.Deref(status.Message, "") != "Deployment db was scaled back" {
			t.Errorf("the responder's entry is %+v, want completed with the Handler's message", status)
		}
	})
}
