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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
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
