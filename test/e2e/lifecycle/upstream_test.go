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

// Cases of the upstream pull requests' integration tests
// (test/integration/evictionrequest of kubernetes/kubernetes#137133),
// re-expressed on the real kube-apiserver with evictionrequest-controller.

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// markTerminal sets pod's phase to phase, as the kubelet does when its
// containers end.
func markTerminal(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	current, err := f.Kube.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	current.Status.Phase = phase
	if _, err := f.Kube.CoreV1().Pods(pod.Namespace).UpdateStatus(t.Context(), current, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// requestReports waits until er reports that its pod was evicted for
// reason, as the Eviction does.
func requestReports(t *testing.T, er *lifecyclev1alpha1.EvictionRequest, reason lifecyclev1alpha1.EvictionConditionReason) {
	t.Helper()
	f.WaitForLifecycleRequest(t, er.Namespace, er.Name, "the request to report "+string(reason), func(er *lifecyclev1alpha1.EvictionRequest) error {
		c := lifecycleutil.Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(reason) {
			return fmt.Errorf("TargetEvicted %+v", c)
		}
		return nil
	})
}

// A pod turns terminal while its responder works, and the responder
// reports its completion a moment later: the controller waits for it, so
// the turn ends Completed and the pod is evicted as terminal.
func TestAResponderCompletesAfterItsPodTurnedTerminal(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	terminal := make(chan struct{})
	f.StartResponder(t, ns, migrator, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		select {
		case <-terminal:
		case <-ctx.Done():
			return interceptor.Result{}, ctx.Err()
		}
		return interceptor.Complete("the job finished"), nil
	})
	pod := podWith(t, ns, "job-0", wrappers.Responder(migrator, 5000))
	er := framework.RequestEviction(t, keptRequester(t), pod)
	f.WaitForEviction(t, pod, "the responder's turn", framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive))

	markTerminal(t, pod, corev1.PodSucceeded)
	close(terminal)
	ev := f.WaitForEviction(t, pod, "the pod evicted as terminal", all(
		framework.ConditionIs(lifecyclev1alpha1.EvictionConditionTargetEvicted, lifecyclev1alpha1.EvictionConditionReasonPodTerminal),
		framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateCompleted)))
	if err := framework.ResponderIs(lifecycleutil.Evictor, lifecyclev1alpha1.ResponderStateInactive)(ev); err != nil {
		t.Error(err)
	}
	if c := lifecycleutil.Condition(ev.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted); c.Message != lifecycle.MessagePodTerminal {
		t.Errorf("TargetEvicted message %q, want %q", c.Message, lifecycle.MessagePodTerminal)
	}
	requestReports(t, er, lifecyclev1alpha1.EvictionConditionReasonPodTerminal)
	notEvicted(t, pod)
}

// A pod turns terminal and its responder never reports: after the grace
// the turn ends Interrupted and the pod is evicted as terminal.
func TestAResponderThatNeverReportsIsInterruptedOnceItsPodIsTerminal(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	held := newHeldTurn()
	f.StartResponder(t, ns, migrator, held.handle)
	pod := podWith(t, ns, "job-0", wrappers.Responder(migrator, 5000))
	er := framework.RequestEviction(t, keptRequester(t), pod)
	f.WaitForEviction(t, pod, "the responder's turn", framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive))
	wait(t, held.started, "the responder's handler to start")

	markTerminal(t, pod, corev1.PodFailed)
	f.WaitForEviction(t, pod, "the responder interrupted and the pod evicted as terminal", all(
		framework.ConditionIs(lifecyclev1alpha1.EvictionConditionTargetEvicted, lifecyclev1alpha1.EvictionConditionReasonPodTerminal),
		framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateInterrupted)))
	requestReports(t, er, lifecyclev1alpha1.EvictionConditionReasonPodTerminal)
}

// A request withdrawn cancels the Eviction; the same request asking again
// gets a new Eviction, which evicts the pod; the request observes each
// change of its spec.
func TestACanceledEvictionIsAskedForAgainThroughTheSameRequest(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	held := newHeldTurn()
	f.StartResponder(t, ns, migrator, held.handle)
	pod := podWith(t, ns, "db-0", wrappers.Responder(migrator, 5000))
	r := keptRequester(t)
	er := framework.RequestEviction(t, r, pod)
	f.WaitForEviction(t, pod, "the responder's turn", framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive))

	if _, err := r.Withdraw(t.Context(), ns, pod.UID); err != nil {
		t.Fatal(err)
	}
	canceled := f.WaitForEviction(t, pod, "the Eviction canceled", all(
		framework.ConditionIs(lifecyclev1alpha1.EvictionConditionFailed, lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters),
		framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateCanceled)))
	f.WaitForLifecycleRequest(t, ns, er.Name, "the request to report the cancellation", func(er *lifecyclev1alpha1.EvictionRequest) error {
		c := lifecycleutil.Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed)
		if c == nil || c.Reason != string(lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters) || c.Message != lifecycle.MessageCanceled {
			return fmt.Errorf("Failed %+v", c)
		}
		if got := ptr.Deref(er.Status.ObservedGeneration, 0); got != 2 {
			return fmt.Errorf("observedGeneration %d, want 2", got)
		}
		return nil
	})

	// Asking again: a new Eviction, which the pod's deletion ends.
	framework.RequestEviction(t, r, pod)
	again := f.WaitForEviction(t, pod, "a new Eviction", func(ev *lifecyclev1alpha1.Eviction) error {
		if ev.Name == canceled.Name || lifecycleutil.IsFinished(ev) {
			return fmt.Errorf("Eviction %s", ev.Name)
		}
		return nil
	})
	if want := "pod-2-db-0"; again.Name != want {
		t.Errorf("the new Eviction is %s, want %s", again.Name, want)
	}
	if err := f.Kube.CoreV1().Pods(ns).Delete(t.Context(), pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	requestReports(t, er, lifecyclev1alpha1.EvictionConditionReasonPodDeleted)
	f.WaitForLifecycleRequest(t, ns, er.Name, "the request to observe the second intent", func(er *lifecyclev1alpha1.EvictionRequest) error {
		if got := ptr.Deref(er.Status.ObservedGeneration, 0); got != 3 {
			return fmt.Errorf("observedGeneration %d, want 3", got)
		}
		return nil
	})
}
