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
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	lifecyclectrl "github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// The participants of the flows: requesters and responders are
// domain-prefixed names outside the reserved k8s.io domain.
const (
	drainer      = "e2e.example.com/drain"
	descheduler  = "e2e.example.com/descheduler"
	migrator     = "migrator.example.com/db"
	checkpointer = "checkpoint.example.com/app"
)

// keptRequester is the drainer as a requester whose requests the pod does
// not own: the garbage collector would remove them, and the Eviction they
// own, as soon as the pod is gone, before the test reads how it ended.
func keptRequester(t *testing.T) *requester.Lifecycle {
	return f.NewLifecycleRequester(t, drainer, requester.Options{KeepAfterPod: true})
}

// podWith creates a running pod that declares responders.
func podWith(t *testing.T, ns, name string, responders ...corev1.EvictionResponder) *corev1.Pod {
	t.Helper()
	return f.CreatePod(t, ns, name, framework.PodOptions{Mutate: func(p *corev1.Pod) { p.Spec.EvictionResponders = responders }})
}

// evicted waits until pod's Eviction and every request of requesters say
// the pod was evicted, and returns the Eviction.
func evicted(t *testing.T, pod *corev1.Pod, requests ...*lifecyclev1alpha1.EvictionRequest) *lifecyclev1alpha1.Eviction {
	t.Helper()
	ev := f.WaitForEviction(t, pod, "the pod evicted", framework.ConditionIs(lifecyclev1alpha1.EvictionConditionTargetEvicted, lifecyclev1alpha1.EvictionConditionReasonPodDeleted))
	for _, er := range requests {
		f.WaitForLifecycleRequest(t, er.Namespace, er.Name, "the request to report the eviction", func(er *lifecyclev1alpha1.EvictionRequest) error {
			if !lifecycleutil.IsTrue(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted) {
				return fmt.Errorf("conditions %+v", er.Status.Conditions)
			}
			return nil
		})
	}
	f.WaitForPodGone(t, pod.Namespace, pod.Name)
	return ev
}

// evictorEnded checks the default evictor's turn on an Eviction whose pod
// it evicted: Completed, with a start and a later completion; or, when it
// had not reported its completion within the controller's grace after the
// pod was deleted (CompletionGrace, upstream's GracefulCompletionDelay:
// 5 s), Interrupted with the pod marked for deletion, as the rule says.
// A loaded machine's kube-controller-manager once took longer.
func evictorEnded(t *testing.T, ev *lifecyclev1alpha1.Eviction) {
	t.Helper()
	status := lifecycleutil.ResponderStatus(ev, lifecycleutil.Evictor)
	if status == nil || status.StartTime == nil {
		t.Errorf("the evictor's status %+v, want a start", status)
		return
	}
	if framework.ResponderIs(lifecycleutil.Evictor, lifecyclev1alpha1.ResponderStateInterrupted)(ev) == nil && status.CompletionTime == nil &&
		strings.Contains(ptr.Deref(status.Message, ""), "marked for deletion") {
		t.Logf("the evictor reported no completion within %s of the pod's deletion: Interrupted (%s)", lifecyclectrl.CompletionGrace, ptr.Deref(status.Message, ""))
		return
	}
	if err := framework.ResponderIs(lifecycleutil.Evictor, lifecyclev1alpha1.ResponderStateCompleted)(ev); err != nil {
		t.Error(err)
	}
	if status.CompletionTime == nil || status.CompletionTime.Before(status.StartTime) {
		t.Errorf("the evictor's status %+v, want a start and a later completion", status)
	}
}

// notEvicted checks that kube-apiserver never received an eviction of pod
// and that the pod is still there.
func notEvicted(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if attempts, _ := f.AuditedEvictions(t, pod.Namespace, pod.Name); attempts != 0 {
		t.Errorf("pod %s was evicted through the API %d times", pod.Name, attempts)
	}
	if _, err := f.Kube.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("pod %s is gone: %v", pod.Name, err)
	}
}

// evictedOnce checks, from kube-apiserver's audit log, that pod was
// evicted through the API exactly once.
func evictedOnce(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if _, granted := f.AuditedEvictions(t, pod.Namespace, pod.Name); granted != 1 {
		t.Errorf("kube-apiserver granted %d evictions of pod %s, want 1", granted, pod.Name)
	}
}

// heldTurn is a responder's Handler that keeps its turn (the SDK
// heartbeats) until it loses it, and says when it started and lost it.
type heldTurn struct {
	started, canceled     chan struct{}
	startOnce, cancelOnce sync.Once
}

func newHeldTurn() *heldTurn {
	return &heldTurn{started: make(chan struct{}), canceled: make(chan struct{})}
}

func (h *heldTurn) handle(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
	if err := req.Report(ctx, interceptor.Progress{Message: "waiting for the replica to catch up"}); err != nil {
		return interceptor.Result{}, err
	}
	h.startOnce.Do(func() { close(h.started) })
	<-ctx.Done()
	h.cancelOnce.Do(func() { close(h.canceled) })
	return interceptor.Result{}, ctx.Err()
}

// wait waits for ch to close, at most framework.DefaultTimeout.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(framework.DefaultTimeout):
		t.Fatalf("waiting for %s: timed out", what)
	}
}

// A pod that declares no responder is evicted by the default evictor: one
// Eviction, labelled with its participants and owned by the request, and
// TargetEvicted on both kinds.
func TestEvictorEvictsAPodWithoutResponders(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{})
	er := framework.RequestEviction(t, keptRequester(t), pod)

	ev := evicted(t, pod, er)
	if want := "pod-1-web-0"; ev.Name != want {
		t.Errorf("Eviction %s, want %s", ev.Name, want)
	}
	for name, role := range map[string]lifecyclev1alpha1.EvictionParticipantRole{
		drainer: lifecyclev1alpha1.EvictionParticipantRoleRequester, lifecycleutil.Evictor: lifecyclev1alpha1.EvictionParticipantRoleResponder,
	} {
		if got := ev.Labels[name]; got != string(role) {
			t.Errorf("label %s=%q, want %s", name, got, role)
		}
	}
	if !slices.ContainsFunc(ev.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == er.UID }) {
		t.Errorf("owner references %+v lack the request", ev.OwnerReferences)
	}
	evictorEnded(t, ev)
	evictedOnce(t, pod)
	if framework.UpstreamControllers() {
		// Kubernetes' controllers record no events.
		return
	}
	// The evictor's action and the outcome; the routine steps between are
	// in the status only. The controller records in order, so that events
	// of the steps before the outcome would be there by now.
	f.WaitForEvents(t, ns, "Eviction", ev.Name, "Evicted", "Completed")
	if got := f.EventReasons(t, ns, "Eviction", ev.Name); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"Completed", "Evicted"}) {
		t.Errorf("events on the Eviction: %v, want only Evicted and Completed", got)
	}
	if got := f.EventReasons(t, ns, "EvictionRequest", er.Name); len(got) != 0 {
		t.Errorf("events on the request: %v, want none", got)
	}
}

// Responders take their turns by priority, highest first, each once, and
// the default evictor (priority 100) last; every turn starts when the one
// before completes.
func TestRespondersTakeTurnsByPriority(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	var mu sync.Mutex
	var turns []string
	for _, name := range []string{migrator, checkpointer} {
		f.StartResponder(t, ns, name, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
			mu.Lock()
			turns = append(turns, name)
			mu.Unlock()
			return interceptor.Complete("%s is done with pod %s", name, req.Pod().Name), nil
		})
	}
	pod := podWith(t, ns, "db-0", wrappers.Responder(checkpointer, 2000), wrappers.Responder(migrator, 5000))
	er := framework.RequestEviction(t, keptRequester(t), pod)

	ev := evicted(t, pod, er)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{migrator, checkpointer}; !slices.Equal(turns, want) {
		t.Errorf("turns %v, want %v", turns, want)
	}
	evictorEnded(t, ev)
	for _, name := range []string{migrator, checkpointer} {
		if err := framework.ResponderIs(name, lifecyclev1alpha1.ResponderStateCompleted)(ev); err != nil {
			t.Error(err)
		}
		status := lifecycleutil.ResponderStatus(ev, name)
		if status == nil || status.StartTime == nil || status.CompletionTime == nil || status.CompletionTime.Before(status.StartTime) {
			t.Errorf("responder %s's status %+v, want a start and a later completion", name, status)
		}
	}
	if got := ptr.Deref(lifecycleutil.ResponderStatus(ev, migrator).Message, ""); got != migrator+" is done with pod db-0" {
		t.Errorf("the migrator's message is %q", got)
	}
	evictedOnce(t, pod)
}

// Two requesters ask for one pod's eviction: one withdrawing changes
// nothing but its intent; when the second withdraws too, the active
// responder is canceled (its Handler's context ends), the evictor never
// runs, and the Eviction fails as canceled.
func TestTwoRequestersOneWithdrawing(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	held := newHeldTurn()
	f.StartResponder(t, ns, migrator, held.handle)
	pod := podWith(t, ns, "db-0", wrappers.Responder(migrator, 5000))
	drain, deschedule := f.NewLifecycleRequester(t, drainer), f.NewLifecycleRequester(t, descheduler)
	framework.RequestEviction(t, drain, pod)
	framework.RequestEviction(t, deschedule, pod)
	f.WaitForEviction(t, pod, "the migrator active for both requesters", all(
		framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive),
		requestersAre(map[string]lifecyclev1alpha1.RequesterIntent{drainer: lifecyclev1alpha1.RequesterIntentEviction, descheduler: lifecyclev1alpha1.RequesterIntentEviction})))
	wait(t, held.started, "the migrator's handler to start")

	if _, err := drain.Withdraw(t.Context(), ns, pod.UID); err != nil {
		t.Fatal(err)
	}
	f.WaitForEviction(t, pod, "the drain's withdrawal", all(
		framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive),
		requestersAre(map[string]lifecyclev1alpha1.RequesterIntent{drainer: lifecyclev1alpha1.RequesterIntentWithdrawn, descheduler: lifecyclev1alpha1.RequesterIntentEviction})))
	select {
	case <-held.canceled:
		t.Fatal("the migrator lost its turn while a requester still wants the eviction")
	default:
	}

	if _, err := deschedule.Withdraw(t.Context(), ns, pod.UID); err != nil {
		t.Fatal(err)
	}
	ev := f.WaitForEviction(t, pod, "the eviction canceled", all(
		framework.ConditionIs(lifecyclev1alpha1.EvictionConditionFailed, lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters),
		framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateCanceled)))
	if err := framework.ResponderIs(lifecycleutil.Evictor, lifecyclev1alpha1.ResponderStateInactive)(ev); err != nil {
		t.Errorf("the evictor ran after the cancellation: %v", err)
	}
	wait(t, held.canceled, "the migrator's handler to be canceled")
	notEvicted(t, pod)
}

// Deleting the only request withdraws it: the responder loses its turn,
// the garbage collector removes the Eviction the request owned, and the
// pod stays.
func TestDeletingTheOnlyRequestWithdrawsIt(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	held := newHeldTurn()
	f.StartResponder(t, ns, migrator, held.handle)
	pod := podWith(t, ns, "db-0", wrappers.Responder(migrator, 5000))
	er := framework.RequestEviction(t, f.NewLifecycleRequester(t, drainer), pod)
	ev := f.WaitForEviction(t, pod, "the migrator active", framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive))
	wait(t, held.started, "the migrator's handler to start")

	if err := f.Kube.LifecycleV1alpha1().EvictionRequests(ns).Delete(t.Context(), er.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(t, held.canceled, "the migrator's handler to be canceled")
	framework.Eventually(t, framework.DefaultTimeout, "the Eviction garbage collected", func(ctx context.Context) error {
		_, err := f.Kube.LifecycleV1alpha1().Evictions(ns).Get(ctx, ev.Name, metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("eviction %s still there", ev.Name)
		}
		return nil
	})
	notEvicted(t, pod)
}

// A request whose target is missing, has another UID or belongs to a
// scheduling group fails as invalid, with a message naming the cause, and
// no Eviction is made of it.
func TestInvalidTargetsFail(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	real := f.CreatePod(t, ns, "web-0", framework.PodOptions{})
	grouped := f.CreatePod(t, ns, "worker-0", framework.PodOptions{Mutate: func(p *corev1.Pod) {
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To("training")}
	}})
	// The garbage collector would remove at once requests owned by pods
	// that do not exist.
	r := keptRequester(t)
	for _, tc := range []struct {
		target *corev1.Pod
		want   string
	}{
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ghost", UID: "0b7c6a8e-0000-4000-8000-000000000001"}}, "not found"},
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: real.Name, UID: types.UID("0b7c6a8e-0000-4000-8000-000000000002")}}, "UID mismatch"},
		{grouped, "references a SchedulingGroup"},
	} {
		er := framework.RequestEviction(t, r, tc.target)
		invalid := func(generation int64) func(er *lifecyclev1alpha1.EvictionRequest) error {
			return func(er *lifecyclev1alpha1.EvictionRequest) error {
				c := lifecycleutil.Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed)
				if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(lifecyclev1alpha1.EvictionConditionReasonEvictionInvalid) || !strings.Contains(c.Message, tc.want) {
					return fmt.Errorf("Failed condition %+v, want EvictionInvalid naming %q", c, tc.want)
				}
				if got := ptr.Deref(er.Status.ObservedGeneration, 0); got != generation {
					return fmt.Errorf("observedGeneration %d, want %d", got, generation)
				}
				return nil
			}
		}
		f.WaitForLifecycleRequest(t, ns, er.Name, "the request of "+tc.target.Name+" to fail as invalid", invalid(1))
		// The outcome is final, but a change of the spec is observed.
		if _, err := r.Withdraw(t.Context(), ns, tc.target.UID); err != nil {
			t.Fatal(err)
		}
		f.WaitForLifecycleRequest(t, ns, er.Name, "the withdrawal of "+tc.target.Name+" to be observed", invalid(2))
	}
	list, err := f.Kube.LifecycleV1alpha1().Evictions(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("Evictions of invalid requests: %v, %v", list, err)
	}
	notEvicted(t, real)
	notEvicted(t, grouped)
}

// all is a condition that holds when every one of conds does.
func all(conds ...func(*lifecyclev1alpha1.Eviction) error) func(*lifecyclev1alpha1.Eviction) error {
	return func(ev *lifecyclev1alpha1.Eviction) error {
		for _, cond := range conds {
			if err := cond(ev); err != nil {
				return err
			}
		}
		return nil
	}
}

// requestersAre is a condition: status.requesters lists exactly want.
func requestersAre(want map[string]lifecyclev1alpha1.RequesterIntent) func(*lifecyclev1alpha1.Eviction) error {
	return func(ev *lifecyclev1alpha1.Eviction) error {
		got := map[string]lifecyclev1alpha1.RequesterIntent{}
		for _, r := range ev.Status.Requesters {
			got[r.Name] = r.Intent
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("requesters %v, want %v", got, want)
		}
		return nil
	}
}
