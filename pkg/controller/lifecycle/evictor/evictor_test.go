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

package evictor

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

var start = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// fixture is an evictor whose caches the test fills by hand; the fake
// clientset records its writes and its calls to the Eviction API.
type fixture struct {
	t          testing.TB
	ctx        context.Context
	clock      *testingclock.FakeClock
	kube       *k8sfake.Clientset
	controller *Controller
	recorder   *record.FakeRecorder
	evictions  cache.Indexer
	pods       cache.Indexer

	mu        sync.Mutex
	evicted   []string
	refuseErr error
}

func newFixture(t testing.TB, objects ...runtime.Object) *fixture {
	t.Helper()
	metrics.Register()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, ctx: ctx, clock: testingclock.NewFakeClock(start), kube: k8sfake.NewClientset()}
	f.kube.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		eviction := action.(clienttesting.CreateAction).GetObject().(*policyv1.Eviction)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.evicted = append(f.evicted, eviction.Name+"@"+string(ptr.Deref(eviction.DeleteOptions.Preconditions.UID, "")))
		return true, nil, f.refuseErr
	})
	// Cached as evictionrequest-controller caches them, as far as the
	// evictor reads them.
	transform := cachetransform.TrimPodsStripManagedFieldsBut(PodAnnotationsRead, ManagersTakenOver...)
	factory := cachetest.KubeInformers(f.kube, transform)
	evictions, pods := factory.Lifecycle().V1alpha1().Evictions(), factory.Core().V1().Pods()
	c, err := NewController(ctx, f.kube, evictions, pods, f.clock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(100)
	c.recorder = f.recorder
	f.controller = c
	if f.evictions, err = cachetest.Cache(evictions.Informer(), transform); err != nil {
		t.Fatal(err)
	}
	if f.pods, err = cachetest.Cache(pods.Informer(), transform); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		if err := f.kube.Tracker().Add(obj); err != nil {
			t.Fatal(err)
		}
		f.cache(obj)
	}
	return f
}

func (f *fixture) cache(obj runtime.Object) {
	f.t.Helper()
	var err error
	switch o := obj.(type) {
	case *corev1.Pod:
		err = f.pods.Update(o)
	case *lifecyclev1alpha1.Eviction:
		err = f.evictions.Update(o)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// sync runs one sync and returns the evictor's entry as stored and the
// requeue delay.
func (f *fixture) sync() (*lifecyclev1alpha1.ResponderStatus, time.Duration) {
	f.t.Helper()
	requeue, err := f.controller.sync(f.ctx, "shop/pod-1-web")
	if err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	ev, err := f.kube.LifecycleV1alpha1().Evictions("shop").Get(f.ctx, "pod-1-web", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.cache(ev)
	return lifecycleutil.ResponderStatus(ev, Name), requeue
}

func (f *fixture) refuse(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuseErr = err
}

func (f *fixture) evictedPods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.evicted...)
}

func (f *fixture) events() []string {
	var events []string
	for {
		select {
		case e := <-f.recorder.Events:
			fields := strings.SplitN(e, " ", 3)
			events = append(events, fields[0]+" "+fields[1])
		default:
			return events
		}
	}
}

// turn is an Eviction of pod whose evictor's turn started at start.
func turn(pod *corev1.Pod) *wrappers.EvictionWrapper {
	return wrappers.MakeEviction("pod-1-web", pod).
		TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder(Name, lifecycleutil.EvictorPriority, lifecyclev1alpha1.ResponderStateActive).Started(Name, start)
}

// The evictor evicts the pod on its turn; its entry is written once the
// pod's termination wakes it (one write, not two), saying the eviction
// started it.
func TestTheEvictorEvictsThePodOnItsTurn(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, pod, turn(pod).Obj())
	entry, requeue := f.sync()
	if diff := cmp.Diff([]string{"web@uid-web"}, f.evictedPods()); diff != "" {
		t.Errorf("evictions with their UID precondition (-want +got):\n%s", diff)
	}
	if entry.Message != nil || entry.HeartbeatTime != nil {
		t.Errorf("the evictor wrote %+v before the pod's termination", entry)
	}
	if requeue != time.Minute {
		t.Errorf("requeue = %s, want 1m: the pod's termination is expected by then", requeue)
	}
	if diff := cmp.Diff([]string{"Normal Evicted"}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	f.cache(wrappers.MakePod("web").Terminating(start.Add(30 * time.Second)).Obj())
	f.clock.Step(time.Second)
	entry, _ = f.sync()
	if got, want := ptr.Deref(entry.Message, ""), `"web" pod has been marked for deletion via the /eviction subresource and is being terminated gracefully`; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if entry.HeartbeatTime == nil || !entry.HeartbeatTime.Time.Equal(f.clock.Now()) {
		t.Errorf("heartbeat = %v, want now", entry.HeartbeatTime)
	}
	if got := len(f.evictedPods()); got != 1 {
		t.Errorf("%d evictions, want 1", got)
	}
}

func TestTheEvictorWaitsForItsTurn(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	ev := wrappers.MakeEviction("pod-1-web", pod).
		TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateActive).Started("acme.io/surge", start).
		TargetResponder(Name, lifecycleutil.EvictorPriority, lifecyclev1alpha1.ResponderStateInactive).Obj()
	f := newFixture(t, pod, ev)
	if entry, _ := f.sync(); entry.Message != nil || entry.HeartbeatTime != nil {
		t.Errorf("the evictor wrote %+v before its turn", entry)
	}
	if got := f.evictedPods(); len(got) > 0 {
		t.Errorf("evicted %v before its turn", got)
	}
}

func TestARefusedEvictionIsRetriedWithBackoffAndCounted(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, pod, turn(pod).Obj())
	f.refuse(wrappers.RefusedByBudget("web-pdb"))

	entry, requeue := f.sync()
	want := `"web" pod deletion via the /eviction subresource failed (attempts=1): Cannot evict pod as it would violate the pod's disruption budget.`
	if got := ptr.Deref(entry.Message, ""); got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if requeue != BackoffBase {
		t.Errorf("requeue = %s, want %s", requeue, BackoffBase)
	}
	f.clock.Step(3 * time.Second)
	if _, requeue := f.sync(); requeue != 2*time.Second {
		t.Errorf("within the backoff: requeue = %s, want the rest of it", requeue)
	}
	if got := len(f.evictedPods()); got != 1 {
		t.Errorf("%d evictions within the backoff, want 1", got)
	}
	f.clock.Step(2 * time.Second)
	entry, requeue = f.sync()
	if got := ptr.Deref(entry.Message, ""); !strings.Contains(got, "failed (attempts=2)") {
		t.Errorf("message = %q, want attempts=2", got)
	}
	if requeue != 2*BackoffBase {
		t.Errorf("requeue = %s, want the doubled backoff", requeue)
	}
	if diff := cmp.Diff([]string{"Warning EvictionFailed", "Warning EvictionFailed"}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// The backoff doubles up to 10 minutes, and the evictor still heartbeats
// while it waits.
func TestTheBackoffIsCappedAtTenMinutes(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, pod, turn(pod).Obj())
	f.refuse(wrappers.RefusedByBudget("web-pdb"))
	var retries []time.Duration
	for range 9 {
		f.sync()
		wait := f.controller.evictor.Backoff.Wait(string(pod.UID), f.clock.Now())
		retries = append(retries, wait)
		f.clock.Step(wait)
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 320 * time.Second, BackoffMax, BackoffMax}
	if diff := cmp.Diff(want, retries); diff != "" {
		t.Errorf("waits between attempts (-want +got):\n%s", diff)
	}
}

// A pod that terminates (here: Failed) while the evictor waits in its
// backoff ends the evictor's turn as completed.
func TestAPodThatTerminatesDuringTheBackoffCompletesTheTurn(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, pod, turn(pod).Obj())
	f.refuse(wrappers.RefusedByBudget("web-pdb"))
	f.sync()
	f.cache(wrappers.MakePod("web").Phase(corev1.PodFailed).Obj())
	f.clock.Step(time.Second)
	entry, requeue := f.sync()
	if got, want := ptr.Deref(entry.Message, ""), `"web" pod has been fully terminated (pod phase="Failed")`; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if entry.CompletionTime == nil || entry.ExpectedCompletionTime == nil || !entry.CompletionTime.Equal(entry.ExpectedCompletionTime) {
		t.Errorf("completion %v, expected completion %v: want both now", entry.CompletionTime, entry.ExpectedCompletionTime)
	}
	if requeue != 0 || len(f.evictedPods()) != 1 {
		t.Errorf("requeue %s after %d evictions, want none after the first", requeue, len(f.evictedPods()))
	}
}

func TestTheAttemptsCountSurvivesARestart(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	ev := turn(pod).Heartbeat(Name, start).ResponderMessage(Name, `"web" pod deletion via the /eviction subresource failed (attempts=3): ...`).Obj()
	f := newFixture(t, pod, ev)
	f.refuse(wrappers.RefusedByBudget("web-pdb"))
	f.clock.Step(time.Minute)
	if entry, _ := f.sync(); !strings.Contains(ptr.Deref(entry.Message, ""), "(attempts=4)") {
		t.Errorf("message = %q, want attempts=4", ptr.Deref(entry.Message, ""))
	}
}

func TestHeartbeatsAreAtLeastTwentySecondsApart(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, pod, turn(pod).Heartbeat(Name, start).Obj())
	f.clock.Step(5 * time.Second)
	entry, _ := f.sync()
	if entry.HeartbeatTime == nil || !entry.HeartbeatTime.Time.Equal(start) {
		t.Errorf("heartbeat = %v five seconds after the last one, want it unchanged", entry.HeartbeatTime)
	}
}

func TestTheEvictorWaitsForATerminatingPodAndCompletesWhenItIsGone(t *testing.T) {
	pod := wrappers.MakePod("web").Terminating(start.Add(30 * time.Second)).Obj()
	f := newFixture(t, pod, turn(pod).Obj())
	entry, requeue := f.sync()
	if got := f.evictedPods(); len(got) > 0 {
		t.Errorf("evicted a terminating pod: %v", got)
	}
	if entry.ExpectedCompletionTime == nil || !entry.ExpectedCompletionTime.Time.Equal(start.Add(30*time.Second)) {
		t.Errorf("expected completion = %v, want the pod's deletion time", entry.ExpectedCompletionTime)
	}
	if entry.CompletionTime != nil {
		t.Error("completed while the pod terminates")
	}
	if got, want := ptr.Deref(entry.Message, ""), `"web" pod has been marked for deletion and is being terminated gracefully`; got != want {
		t.Errorf("message = %q, want %q: someone else deleted it", got, want)
	}
	if requeue != HeartbeatInterval {
		t.Errorf("requeue = %s, want the next heartbeat", requeue)
	}
	if err := f.pods.Delete(pod); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Minute)
	entry, requeue = f.sync()
	if entry.CompletionTime == nil || !entry.CompletionTime.Time.Equal(f.clock.Now()) || !entry.ExpectedCompletionTime.Time.Equal(f.clock.Now()) {
		t.Errorf("completion = %v, expected completion %v, want both now", entry.CompletionTime, entry.ExpectedCompletionTime)
	}
	if got, want := ptr.Deref(entry.Message, ""), `"web" pod has been deleted and fully terminated`; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if requeue != 0 {
		t.Errorf("requeue = %s after completion", requeue)
	}
}

// The API's documentation: the evictor evicts the target pod through the
// Eviction API, DaemonSet and mirror pods included.
func TestDaemonSetAndMirrorPodsAreEvictedToo(t *testing.T) {
	for name, pod := range map[string]*corev1.Pod{
		"DaemonSet": wrappers.MakePod("web").DaemonSet().Obj(),
		"mirror":    wrappers.MakePod("web").Mirror().Obj(),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pod, turn(pod).Obj())
			f.sync()
			if diff := cmp.Diff([]string{"web@uid-web"}, f.evictedPods()); diff != "" {
				t.Errorf("evictions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"Normal Evicted"}, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// An evictor held back by a PodDisruptionBudget stops once the Eviction is
// canceled (every requester withdrew): when the budget then allows it, it
// neither evicts the pod nor writes its entry again, as upstream's
// integration case "pdb stalls eviction and cancels eviction" has it.
func TestACanceledTurnStopsAnEvictorHeldByABudget(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, pod, turn(pod).Obj())
	f.refuse(wrappers.RefusedByBudget("web-pdb"))
	stalled, _ := f.sync()
	if got := ptr.Deref(stalled.Message, ""); !strings.Contains(got, "failed (attempts=1)") {
		t.Fatalf("message = %q, want attempts=1", got)
	}

	canceled := turn(pod).ResponderMessage(Name, *stalled.Message).
		Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters, start).Obj()
	canceled.Status.TargetResponders[1].State = lifecyclev1alpha1.ResponderStateCanceled
	canceled.Status.Responders[1].HeartbeatTime = stalled.HeartbeatTime
	if _, err := f.kube.LifecycleV1alpha1().Evictions("shop").UpdateStatus(f.ctx, canceled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.cache(canceled)
	f.refuse(nil)
	writes := len(f.kube.Actions())
	for range 3 {
		f.clock.Step(BackoffMax)
		entry, requeue := f.sync()
		if requeue != 0 {
			t.Errorf("requeue = %s, want none: the turn is over", requeue)
		}
		if entry.CompletionTime != nil || entry.ExpectedCompletionTime != nil || ptr.Deref(entry.Message, "") != *stalled.Message {
			t.Errorf("entry after the cancellation = %+v, want it as the stalled attempt left it", entry)
		}
	}
	if got := len(f.evictedPods()); got != 1 {
		t.Errorf("%d evictions, want only the refused one", got)
	}
	for _, a := range f.kube.Actions()[writes:] {
		if a.GetVerb() != "get" {
			t.Errorf("wrote after the cancellation: %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		}
	}
}

// The garbage collector deletes a pod's Eviction with the pod: the pod's
// deletion alone must drop what the evictor remembers of it.
func TestAPodsDeletionForgetsItsBackoff(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, pod, turn(pod).Obj())
	f.sync()
	uid := string(pod.UID)
	if !f.controller.evictor.Backoff.Granted(uid) {
		t.Fatalf("evicted %v, but the backoff has no grant for the pod", f.evictedPods())
	}
	f.controller.podDeleted(cache.DeletedFinalStateUnknown{Key: "shop/web", Obj: pod})
	if f.controller.evictor.Backoff.Granted(uid) || f.controller.evictor.Backoff.Wait(uid, f.clock.Now()) != 0 {
		t.Error("the deleted pod's backoff is still remembered")
	}
}
