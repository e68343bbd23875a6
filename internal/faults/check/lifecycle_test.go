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

package check

import (
	"testing"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleapi "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// lifecycleKnobs turn a clean lifecycle.k8s.io history into one that
// breaks, or tests, one rule.
type lifecycleKnobs struct {
	noRelease, lateRelease, escalated, marked, noRequest, gap bool
	notFinished, silentWaiting, twoRequests, twoEvictions     bool
	writeLoop, notListedYet, markedAndEvicted, lateGrant      bool
}

const requester = "nodemaintenance.example.com"

// buildLifecycle is a plugin drain of node-1 on lifecycle.k8s.io: the pod
// web-1 declares one responder, which completes its turn; the default
// evictor evicts the pod once it did, the Eviction and the request say
// TargetEvicted.
func buildLifecycle(t *testing.T, k lifecycleKnobs) *story {
	s := newStory()
	start := s.now
	pod := wrappers.MakePod("web-1").Namespace("shop").UID("uid-1").Node("node-1").Responders(wrappers.Responder(interceptor, 10000))
	s.see(t, history.KindPod, history.Added, pod.Obj().DeepCopy())
	kind := history.DrainPlugin
	if k.noRequest {
		kind = history.DrainKubectl
	}
	s.drain(history.Drain{ID: "d1", Kind: kind, Nodes: []string{"node-1"}, Phase: history.PhaseStart})

	request := wrappers.MakeLifecycleRequest("web-1-drain", pod.Obj(), requester).Created(start)
	if k.escalated {
		request.Annotation(drain.DeadlineAnnotation, start.Format(time.RFC3339)).Annotation(drain.OnDeadlineAnnotation, "evict")
	}
	ev := wrappers.MakeEviction("web-1", pod.Obj()).Created(start).Requester(requester, lifecyclev1alpha1.RequesterIntentEviction)
	// again is a second request of the same requester.
	again := wrappers.MakeLifecycleRequest("web-1-drain-again", pod.Obj(), requester).Created(start)
	// second is an Eviction of the same pod made while the first works.
	second := wrappers.MakeEviction("web-1-1", pod.Obj()).Created(start)
	if !k.noRequest {
		s.see(t, history.KindLifecycleEvictionRequest, history.Added, request.Obj().DeepCopy())
		if k.twoRequests {
			s.see(t, history.KindLifecycleEvictionRequest, history.Added, again.Obj().DeepCopy())
		}
		s.see(t, history.KindEviction, history.Added, ev.Obj().DeepCopy())
		if k.twoEvictions {
			s.see(t, history.KindEviction, history.Added, second.Obj().DeepCopy())
		}
		if !k.notListedYet {
			ev.TargetResponder(interceptor, 10000, lifecyclev1alpha1.ResponderStateActive).
				TargetResponder(lifecycleapi.Evictor, lifecycleapi.EvictorPriority, lifecyclev1alpha1.ResponderStateInactive).
				Started(interceptor, s.now).Heartbeat(interceptor, s.now)
			s.see(t, history.KindEviction, history.Modified, ev.Obj().DeepCopy())
		}
		if k.writeLoop {
			for range defaultMaxWrite {
				s.see(t, history.KindEviction, history.Modified, ev.Heartbeat(interceptor, s.now).Obj().DeepCopy())
			}
		}
		if k.gap {
			s.see(t, history.KindEviction, history.Gap, ev.Obj().DeepCopy())
		}
		if !k.noRelease && !k.lateRelease {
			s.see(t, history.KindEviction, history.Modified, released(ev, s.now).Obj().DeepCopy())
		}
	}
	if !k.marked || k.markedAndEvicted {
		// The surge removes the pod it marked by scaling its ReplicaSet
		// back, not by an eviction.
		s.grant(pod.Obj(), evictor)
	}
	ending := pod.Obj().DeepCopy()
	if k.marked {
		ending.Annotations = map[string]string{surge.MarkedByAnnotation: interceptor}
	}
	ending.DeletionTimestamp = &metav1.Time{Time: s.now}
	s.see(t, history.KindPod, history.Modified, ending)
	if k.lateGrant {
		// kubectl drain's retry finds the pod terminating: granted, with
		// nothing done.
		s.grant(pod.Obj(), "kubernetes-admin")
	}
	if k.lateRelease {
		s.see(t, history.KindEviction, history.Modified, released(ev, s.now).Obj().DeepCopy())
	}
	s.see(t, history.KindPod, history.Deleted, ending)
	if !k.noRequest {
		switch {
		case k.silentWaiting:
			waiting := wrappers.MakeEviction("web-1", pod.Obj()).Created(start).
				TargetResponder(silent, 10000, lifecyclev1alpha1.ResponderStateActive).
				TargetResponder(lifecycleapi.Evictor, lifecycleapi.EvictorPriority, lifecyclev1alpha1.ResponderStateInactive).
				Started(silent, s.now)
			s.see(t, history.KindEviction, history.Modified, waiting.Obj().DeepCopy())
		case !k.notFinished:
			evicted := ev.Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, s.now)
			s.see(t, history.KindEviction, history.Modified, evicted.Obj().DeepCopy())
			request.Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, s.now)
			s.see(t, history.KindLifecycleEvictionRequest, history.Modified, request.Obj().DeepCopy())
			if k.twoRequests {
				again.Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, s.now)
				s.see(t, history.KindLifecycleEvictionRequest, history.Modified, again.Obj().DeepCopy())
			}
		}
		if k.twoEvictions {
			canceled := second.Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters, s.now)
			s.see(t, history.KindEviction, history.Modified, canceled.Obj().DeepCopy())
		}
	}
	s.drain(history.Drain{ID: "d1", Kind: kind, Phase: history.PhaseEnd, Outcome: history.OutcomeDrained})
	return s
}

// released is ev once its responder completed and the default evictor took
// the turn.
func released(ev *wrappers.EvictionWrapper, at time.Time) *wrappers.EvictionWrapper {
	return ev.CompletedAt(interceptor, at).State(interceptor, lifecyclev1alpha1.ResponderStateCompleted).
		State(lifecycleapi.Evictor, lifecyclev1alpha1.ResponderStateActive).Started(lifecycleapi.Evictor, at)
}

func TestCheckLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		knobs lifecycleKnobs
		// broken is the invariant the history breaks, "" for none, with a
		// word of the first violation's line, and how many violations (0:
		// one).
		broken, says string
		n            int
	}{
		{name: "clean"},
		{name: "a release seen after the pod ended", knobs: lifecycleKnobs{lateRelease: true}},
		{name: "a drain's deadline that evicts", knobs: lifecycleKnobs{noRelease: true, escalated: true}},
		{name: "the holder marked the pod it removes", knobs: lifecycleKnobs{noRelease: true, marked: true}},
		{name: "the holder's mark on a pod evicted all the same", knobs: lifecycleKnobs{noRelease: true, marked: true, markedAndEvicted: true},
			broken: TurnHeld, says: "responder " + interceptor},
		{name: "the holder's mark on a pod granted an eviction once terminating", knobs: lifecycleKnobs{noRelease: true, marked: true, lateGrant: true}},
		{name: "waiting on a silent participant", knobs: lifecycleKnobs{silentWaiting: true}},
		{name: "a pod ended while its turn was held", knobs: lifecycleKnobs{noRelease: true}, broken: TurnHeld, says: "responder " + interceptor},
		{name: "a pod ended before its responders were listed", knobs: lifecycleKnobs{noRelease: true, notListedYet: true}, broken: TurnHeld, says: "not yet selected"},
		{name: "a watch lost events", knobs: lifecycleKnobs{noRelease: true, gap: true}},
		{name: "a pod with responders evicted without a request", knobs: lifecycleKnobs{noRequest: true}, broken: TurnHeld, says: "no EvictionRequest"},
		{name: "an Eviction and its request never finished", knobs: lifecycleKnobs{notFinished: true}, broken: RequestSettled, says: "Eviction shop/web-1 neither done", n: 2},
		{name: "two requests of one requester", knobs: lifecycleKnobs{twoRequests: true}, broken: RequestKept, says: "of " + requester},
		{name: "an Eviction made while another was not finished", knobs: lifecycleKnobs{twoEvictions: true}, broken: RequestKept, says: "was not finished"},
		{name: "a write loop", knobs: lifecycleKnobs{writeLoop: true}, broken: WritesBounded, says: "Eviction shop/web-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := buildLifecycle(t, tc.knobs)
			report, err := Check(s.entries, s.audit, Options{SilentParticipants: []string{silent}})
			if err != nil {
				t.Fatal(err)
			}
			expectBroken(t, report, tc.broken, tc.says, max(tc.n, 1))
		})
	}
}

// TestCheckLifecycleCounts checks that a clean lifecycle history is
// checked, not skipped: the pod's turn, its request and its Eviction.
func TestCheckLifecycleCounts(t *testing.T) {
	s := buildLifecycle(t, lifecycleKnobs{})
	report, err := Check(s.entries, s.audit, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{TurnHeld: 1, RequestSettled: 2, RequestKept: 1, WritesBounded: 2, DrainEnded: 1, EvictedOnce: 1}
	for _, res := range report.Results {
		if n, ok := want[res.Invariant]; ok && res.Checked != n {
			t.Errorf("%s: checked %d, want %d", res.Invariant, res.Checked, n)
		}
	}
}
