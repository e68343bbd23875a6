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
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

const (
	evictor = lifecycleutil.Evictor
	active  = lifecyclev1alpha1.ResponderStateActive
	idle    = lifecyclev1alpha1.ResponderStateInactive
)

var (
	awaitingConditions = []string{"Failed=False/AwaitingEviction", "TargetEvicted=False/AwaitingEviction"}
	podWithResponders  = wrappers.MakePod("web").Responders(
		wrappers.Responder("acme.io/backup", 1000), wrappers.Responder("acme.io/surge", 10000)).Obj()
)

func TestFirstSyncStartsTheTurnOfTheHighestPriority(t *testing.T) {
	f := newFixture(t, podWithResponders, wrappers.MakeEviction("pod-1-web", podWithResponders).Obj(),
		wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
	ev, resync := f.syncEviction("pod-1-web")

	want := []string{"acme.io/surge=Active", "acme.io/backup=Inactive", evictor + "=Inactive"}
	if diff := cmp.Diff(want, states(ev)); diff != "" {
		t.Errorf("responders (-want +got):\n%s", diff)
	}
	if got := lifecycleutil.ResponderStatus(ev, "acme.io/surge").StartTime; got == nil || !got.Time.Equal(start) {
		t.Errorf("start time of the active responder = %v, want %v", got, start)
	}
	if got := lifecycleutil.ResponderStatus(ev, "acme.io/backup"); got == nil || got.StartTime != nil {
		t.Errorf("entry of an inactive responder = %+v, want one without a start time", got)
	}
	if diff := cmp.Diff([]lifecyclev1alpha1.Requester{{Name: requester, Intent: lifecyclev1alpha1.RequesterIntentEviction}}, ev.Status.Requesters); diff != "" {
		t.Errorf("requesters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(awaitingConditions, conditionsOf(ev.Status.Conditions)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if resync != lifecycleutil.HeartbeatDeadline {
		t.Errorf("resync = %s, want the heartbeat deadline", resync)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("the first turn's start recorded %v, want no event: the status says it", got)
	}
	if _, resync := f.syncEviction("pod-1-web"); resync != lifecycleutil.HeartbeatDeadline {
		t.Errorf("a second sync asked to look again in %s, want at the deadline", resync)
	}
	if got := f.events(); len(got) > 0 {
		t.Errorf("a sync that changed nothing recorded %v", got)
	}
}

func TestEqualPrioritiesTakeTurnsByDomainFromTheTop(t *testing.T) {
	pod := wrappers.MakePod("web").Responders(
		wrappers.Responder("b.example.org/x", 5000), wrappers.Responder("a.example.org/y", 5000),
		wrappers.Responder("z.example.com/x", 5000), wrappers.Responder("a.example.org/x", 5000)).Obj()
	f := newFixture(t, pod, wrappers.MakeEviction("pod-1-web", pod).Obj(), wrappers.MakeLifecycleRequest("r1", pod, requester).Obj())
	ev, _ := f.syncEviction("pod-1-web")
	want := []string{"z.example.com/x=Active", "a.example.org/x=Inactive", "a.example.org/y=Inactive", "b.example.org/x=Inactive", evictor + "=Inactive"}
	if diff := cmp.Diff(want, states(ev)); diff != "" {
		t.Errorf("responders (-want +got):\n%s", diff)
	}
}

// running is an Eviction of podWithResponders whose surge responder has
// been active since start.
func running() *wrappers.EvictionWrapper {
	return wrappers.MakeEviction("pod-1-web", podWithResponders).
		Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
		TargetResponder("acme.io/surge", 10000, active).TargetResponder("acme.io/backup", 1000, idle).
		TargetResponder(evictor, lifecycleutil.EvictorPriority, idle).Started("acme.io/surge", start)
}

var turnCases = map[string]struct {
	eviction    *lifecyclev1alpha1.Eviction
	after       time.Duration
	states      []string
	conditions  []string
	resync      time.Duration
	events      []string
	nextStarted bool
}{
	"within the deadline of its start": {
		eviction: running().Obj(), after: 5 * time.Minute,
		states:     []string{"acme.io/surge=Active", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: awaitingConditions, resync: 15 * time.Minute,
	},
	"within the deadline of its heartbeat": {
		eviction: running().Heartbeat("acme.io/surge", start.Add(15*time.Minute)).Obj(), after: 25 * time.Minute,
		states:     []string{"acme.io/surge=Active", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: awaitingConditions, resync: 10 * time.Minute,
	},
	"no heartbeat within the deadline of its start": {
		eviction: running().Obj(), after: 20 * time.Minute,
		states:     []string{"acme.io/surge=Interrupted", "acme.io/backup=Active", evictor + "=Inactive"},
		conditions: awaitingConditions, resync: 20 * time.Minute, events: []string{"Warning ResponderTimedOut"}, nextStarted: true,
	},
	"completed": {
		eviction: running().CompletedAt("acme.io/surge", start.Add(time.Minute)).Obj(), after: 2 * time.Minute,
		states:     []string{"acme.io/surge=Completed", "acme.io/backup=Active", evictor + "=Inactive"},
		conditions: awaitingConditions, resync: 20 * time.Minute, events: []string{"Normal ResponderHandedOff"}, nextStarted: true,
	},
}

func TestTheActiveResponderKeepsItsTurnUntilItCompletesOrMissesItsDeadline(t *testing.T) {
	for name, tc := range turnCases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, podWithResponders, tc.eviction, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
			f.clock.Step(tc.after)
			ev, resync := f.syncEviction("pod-1-web")
			if diff := cmp.Diff(tc.states, states(ev)); diff != "" {
				t.Errorf("responders (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.conditions, conditionsOf(ev.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if resync != tc.resync {
				t.Errorf("resync = %s, want %s", resync, tc.resync)
			}
			if diff := cmp.Diff(tc.events, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			started := lifecycleutil.ResponderStatus(ev, "acme.io/backup").StartTime
			if tc.nextStarted != (started != nil && started.Time.Equal(f.clock.Now())) {
				t.Errorf("start of the next responder = %v, want started now: %v", started, tc.nextStarted)
			}
		})
	}
}

func TestNoFurtherResponderFailsTheEviction(t *testing.T) {
	ev := wrappers.MakeEviction("pod-1-web", podWithResponders).Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
		TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder("acme.io/backup", 1000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder(evictor, lifecycleutil.EvictorPriority, active).Started(evictor, start).Obj()
	f := newFixture(t, podWithResponders, ev, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
	f.clock.Step(lifecycleutil.HeartbeatDeadline)
	got, _ := f.syncEviction("pod-1-web")
	if diff := cmp.Diff([]string{"Failed=True/NoFurtherResponder", "TargetEvicted=False/EvictionFailed"}, conditionsOf(got.Status.Conditions)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if s := states(got); s[2] != evictor+"=Interrupted" {
		t.Errorf("the last responder is %s, want Interrupted", s[2])
	}
	if diff := cmp.Diff([]string{"Warning ResponderTimedOut", "Warning NoFurtherResponder"}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

var withdrawalCases = map[string]*lifecyclev1alpha1.EvictionRequest{
	"intent Withdrawn": wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Withdrawn().Obj(),
	"deleted":          wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Deleting(start).Obj(),
}

func TestWithdrawalOfEveryRequesterCancelsTheActiveResponder(t *testing.T) {
	for name, er := range withdrawalCases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, podWithResponders, running().Obj(), er)
			ev, _ := f.syncEviction("pod-1-web")
			want := []string{"acme.io/surge=Canceled", "acme.io/backup=Inactive", evictor + "=Inactive"}
			if diff := cmp.Diff(want, states(ev)); diff != "" {
				t.Errorf("responders (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]lifecyclev1alpha1.Requester{{Name: requester, Intent: lifecyclev1alpha1.RequesterIntentWithdrawn}}, ev.Status.Requesters); diff != "" {
				t.Errorf("requesters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"Failed=True/CanceledDueToNoRequesters", "TargetEvicted=False/EvictionFailed"}, conditionsOf(ev.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOneRequesterWithdrawingLeavesTheEvictionToTheOther(t *testing.T) {
	f := newFixture(t, podWithResponders, running().Obj(),
		wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Withdrawn().Created(start).Obj(),
		wrappers.MakeLifecycleRequest("r2", podWithResponders, "acme.io/autoscaler").Created(start.Add(time.Second)).Obj())
	ev, _ := f.syncEviction("pod-1-web")
	want := []lifecyclev1alpha1.Requester{
		{Name: "acme.io/autoscaler", Intent: lifecyclev1alpha1.RequesterIntentEviction},
		{Name: requester, Intent: lifecyclev1alpha1.RequesterIntentWithdrawn},
	}
	if diff := cmp.Diff(want, ev.Status.Requesters); diff != "" {
		t.Errorf("requesters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(awaitingConditions, conditionsOf(ev.Status.Conditions)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

var endCases = map[string]struct {
	pod        *corev1.Pod
	eviction   *lifecyclev1alpha1.Eviction
	states     []string
	conditions []string
	resync     time.Duration
	// vanished: the pod was gone (or its status does not say when it
	// stopped) when the controller first looked, which first waits
	// CompletionGrace for the responder to report.
	vanished bool
}{
	"deleted after the active responder completed": {
		eviction:   running().CompletedAt("acme.io/surge", start).Obj(),
		states:     []string{"acme.io/surge=Completed", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: []string{"Failed=False/Succeeded", "TargetEvicted=True/PodDeleted"},
	},
	"deleted before the active responder reported": {
		eviction:   running().Obj(),
		states:     []string{"acme.io/surge=Interrupted", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: []string{"Failed=False/Succeeded", "TargetEvicted=True/PodDeleted"},
		vanished:   true,
	},
	"replaced by a pod of its name": {
		pod:        wrappers.MakePod("web").UID("uid-other").Obj(),
		eviction:   running().Obj(),
		states:     []string{"acme.io/surge=Interrupted", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: []string{"Failed=False/Succeeded", "TargetEvicted=True/PodDeleted"},
		vanished:   true,
	},
	"terminal and deleting for less than the grace": {
		pod:        wrappers.MakePod("web").Phase(corev1.PodSucceeded).Terminating(start.Add(-2 * time.Second)).Obj(),
		eviction:   running().Obj(),
		states:     []string{"acme.io/surge=Active", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: awaitingConditions, resync: 3 * time.Second,
	},
	"terminal, its containers finished less than the grace ago": {
		pod:        wrappers.MakePod("web").Phase(corev1.PodSucceeded).ContainerFinished(start.Add(-4 * time.Second)).Obj(),
		eviction:   running().Obj(),
		states:     []string{"acme.io/surge=Active", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: awaitingConditions, resync: time.Second,
	},
	"terminal, its containers finished more than the grace ago": {
		pod:        wrappers.MakePod("web").Phase(corev1.PodSucceeded).ContainerFinished(start.Add(-6 * time.Second)).Obj(),
		eviction:   running().Obj(),
		states:     []string{"acme.io/surge=Interrupted", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: []string{"Failed=False/Succeeded", "TargetEvicted=True/PodTerminal"},
	},
	"terminal, only its phase says so": {
		pod:        wrappers.MakePod("web").Phase(corev1.PodFailed).Obj(),
		eviction:   running().Obj(),
		states:     []string{"acme.io/surge=Interrupted", "acme.io/backup=Inactive", evictor + "=Inactive"},
		conditions: []string{"Failed=False/Succeeded", "TargetEvicted=True/PodTerminal"},
		vanished:   true,
	},
}

func TestAPodThatIsGoneOrTerminalIsEvicted(t *testing.T) {
	for name, tc := range endCases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.eviction, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
			if tc.pod != nil {
				f.add(tc.pod)
			}
			ev, resync := f.syncEviction("pod-1-web")
			if tc.vanished {
				// The grace of a pod deleted before the cache saw it
				// terminating runs from when the controller saw it gone.
				if got := states(ev)[0]; got != "acme.io/surge=Active" || resync != CompletionGrace {
					t.Errorf("first sync: %s, resync %s; want the responder still active for %s", got, resync, CompletionGrace)
				}
				f.clock.Step(CompletionGrace)
				ev, resync = f.syncEviction("pod-1-web")
			}
			if diff := cmp.Diff(tc.states, states(ev)); diff != "" {
				t.Errorf("responders (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.conditions, conditionsOf(ev.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if resync != tc.resync {
				t.Errorf("resync = %s, want %s", resync, tc.resync)
			}
		})
	}
}

func TestInvalidEvictions(t *testing.T) {
	grouped := wrappers.MakePod("web").Obj()
	grouped.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{}
	for name, tc := range map[string]struct {
		objects []runtime.Object
		message string
	}{
		"a second active Eviction of the pod": {
			objects: []runtime.Object{podWithResponders, running().Created(start.Add(-time.Minute)).Obj(),
				wrappers.MakeEviction("pod-2-web", podWithResponders).Created(start).Obj()},
			message: MessageDuplicateEviction,
		},
		"a pod in a scheduling group": {
			objects: []runtime.Object{grouped, wrappers.MakeEviction("pod-2-web", grouped).Obj()},
			message: MessageSchedulingGroup,
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.objects...)
			ev, _ := f.syncEviction("pod-2-web")
			if diff := cmp.Diff([]string{"Failed=True/EvictionInvalid", "TargetEvicted=False/EvictionFailed"}, conditionsOf(ev.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if got := lifecycleutil.Condition(ev.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed).Message; got != tc.message {
				t.Errorf("message = %q, want %q", got, tc.message)
			}
			if len(ev.Status.TargetResponders) != 0 {
				t.Errorf("an invalid Eviction got responders: %v", states(ev))
			}
		})
	}
}

// Two Evictions of one pod created within the same second: whatever the
// order of the syncs, one stays active and the other fails as a duplicate,
// keeping the states its responders had (a client made the second beside
// the controller, and both started before either saw the other).
func TestOfTwoEvictionsCreatedInOneSecondOneStaysActive(t *testing.T) {
	for name, tc := range map[string]struct {
		first, second *lifecyclev1alpha1.Eviction
		loser         string
	}{
		"neither started: the lower name counts": {
			first:  wrappers.MakeEviction("pod-10-web", podWithResponders).Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).Created(start).Obj(),
			second: wrappers.MakeEviction("pod-9-web", podWithResponders).Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).Created(start).Obj(),
			loser:  "pod-10-web",
		},
		"one started: it counts": {
			first:  running().Created(start).Obj(),
			second: wrappers.MakeEviction("a-client-eviction", podWithResponders).Created(start).Obj(),
			loser:  "a-client-eviction",
		},
		"both started: the lower name counts": {
			first:  running().Created(start).Obj(),
			second: running().Name("pod-2-web").Created(start).Obj(),
			loser:  "pod-2-web",
		},
	} {
		for _, order := range [][]int{{0, 1}, {1, 0}} {
			t.Run(fmt.Sprintf("%s, synced in order %v", name, order), func(t *testing.T) {
				evictions := []*lifecyclev1alpha1.Eviction{tc.first, tc.second}
				f := newFixture(t, podWithResponders, evictions[0], evictions[1],
					wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
				for _, i := range order {
					f.syncEviction(evictions[i].Name)
				}
				for _, ev := range evictions {
					got := f.eviction(ev.Name)
					invalid := lifecycleutil.Condition(got.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed)
					isLoser := invalid != nil && invalid.Status == metav1.ConditionTrue && invalid.Message == MessageDuplicateEviction
					if isLoser != (ev.Name == tc.loser) {
						t.Errorf("Eviction %s failed as a duplicate: %v, want %v (conditions %v)", ev.Name, isLoser, ev.Name == tc.loser, conditionsOf(got.Status.Conditions))
					}
					if len(ev.Status.TargetResponders) > 0 && len(got.Status.TargetResponders) != len(ev.Status.TargetResponders) {
						t.Errorf("Eviction %s lost its responders' states: %v", ev.Name, states(got))
					}
				}
			})
		}
	}
}

func TestAFinishedEvictionIsLeftAsItIs(t *testing.T) {
	ev := running().Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, start).Obj()
	f := newFixture(t, ev, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Withdrawn().Obj())
	got, _ := f.syncEviction("pod-1-web")
	if diff := cmp.Diff(ev.Status, got.Status); diff != "" {
		t.Errorf("status changed (-want +got):\n%s", diff)
	}
}

// A sync that comes before the cache has the controller's last write, as
// when a pod event requeues the key at once, decides from that write, not
// from the older copy: the step is taken, and reported, once.
func TestASyncBeforeTheCacheCatchesUpDoesNotRepeatTheStep(t *testing.T) {
	ev := wrappers.MakeEviction("pod-1-web", podWithResponders).Obj()
	ev.ResourceVersion = "5"
	f := newFixture(t, podWithResponders, ev, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
	if _, err := f.controller.syncEviction(f.ctx, "shop/pod-1-web"); err != nil {
		t.Fatal(err)
	}
	// The write as kube-apiserver answers it, with a newer resourceVersion
	// (the fake clientset sets none), while the cache still has version 5.
	written := f.eviction("pod-1-web")
	written.ResourceVersion = "6"
	f.controller.written.Mutation(written)
	writes := len(f.kube.Actions())
	if _, err := f.controller.syncEviction(f.ctx, "shop/pod-1-web"); err != nil {
		t.Fatal(err)
	}
	if got := f.kube.Actions()[writes:]; len(got) != 0 {
		t.Errorf("the second sync wrote %v, want nothing", got)
	}
}

// lastTurnCompleted is an Eviction of podWithResponders whose evictor, the
// last responder, completed its turn.
func lastTurnCompleted() *lifecyclev1alpha1.Eviction {
	return wrappers.MakeEviction("pod-1-web", podWithResponders).Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
		TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder("acme.io/backup", 1000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder(evictor, lifecycleutil.EvictorPriority, active).Started(evictor, start).
		CompletedAt(evictor, start.Add(time.Second)).Obj()
}

// The end of the last turn records no event of its own when it completed:
// the Eviction's outcome, recorded with it, says the rest. A drain of a
// node records one event per pod from the controller.
func TestACompletedLastTurnRecordsOnlyTheOutcome(t *testing.T) {
	for name, tc := range map[string]struct {
		pod    *corev1.Pod
		events []string
	}{
		"the pod is gone":    {events: []string{"Normal Completed"}},
		"the pod is running": {pod: podWithResponders, events: []string{"Warning NoFurtherResponder"}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, lastTurnCompleted(), wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
			if tc.pod != nil {
				f.add(tc.pod)
			}
			f.clock.Step(2 * time.Second)
			ev, _ := f.syncEviction("pod-1-web")
			if s := states(ev); s[2] != evictor+"=Completed" {
				t.Errorf("the last responder is %s, want Completed", s[2])
			}
			if diff := cmp.Diff(tc.events, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
