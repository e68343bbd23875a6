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
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

// A writer of evictions/status (any responder) says an Eviction evicted
// its pod while the pod runs, as kube-apiserver lets it once it ends the
// active responder's turn in the same write: the request does not report
// the pod evicted, and is not finished; a new Eviction starts, its
// responders' turns from the first.
func TestARequestReportsItsPodEvictedOnlyOnceItIs(t *testing.T) {
	forged := wrappers.MakeEviction("pod-1-web", podWithResponders).
		Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
		TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateInterrupted).TargetResponder("acme.io/backup", 1000, idle).
		TargetResponder(evictor, lifecycleutil.EvictorPriority, idle).Started("acme.io/surge", start).
		Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionFalse, lifecyclev1alpha1.EvictionConditionReasonSucceeded, start).
		Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, start).Obj()
	f := newFixture(t, podWithResponders, forged, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())

	er := f.syncRequest("r1")

	if lifecycleutil.IsRequestFinished(er) || lifecycleutil.IsTrue(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted) {
		t.Errorf("the request of a running pod reports %v, want it open", conditionsOf(er.Status.Conditions))
	}
	if diff := cmp.Diff([]string{"pod-1-web", "pod-2-web"}, f.evictionNames()); diff != "" {
		t.Errorf("Evictions (-want +got):\n%s", diff)
	}
	f.cache(f.eviction("pod-2-web"))
	ev, _ := f.syncEviction("pod-2-web")
	if diff := cmp.Diff([]string{"acme.io/surge=Active", "acme.io/backup=Inactive", evictor + "=Inactive"}, states(ev)); diff != "" {
		t.Errorf("the new Eviction's responders (-want +got):\n%s", diff)
	}

	// Once the pod is gone, the Eviction's word stands.
	if err := f.pods.Delete(podWithResponders); err != nil {
		t.Fatal(err)
	}
	f.kube.ClearActions()
	er = f.syncRequest("r1")
	if !lifecycleutil.IsTrue(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted) {
		t.Errorf("the request of a deleted pod reports %v, want TargetEvicted", conditionsOf(er.Status.Conditions))
	}
}

// The pod cache can be behind the Eviction cache (a new term lists them at
// different versions): an Eviction that says its pod was evicted while the
// cache still has the pod running is believed once kube-apiserver says the
// pod is gone, and no second Eviction is made for a pod that is gone.
func TestAnEvictionIsBelievedWhenThePodCacheIsBehind(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	evicted := wrappers.MakeEviction("pod-1-web", pod).
		Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
		TargetResponder(evictor, lifecycleutil.EvictorPriority, lifecyclev1alpha1.ResponderStateCompleted).Started(evictor, start).
		Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionFalse, lifecyclev1alpha1.EvictionConditionReasonSucceeded, start).
		Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, start).Obj()
	f := newFixture(t, evicted, wrappers.MakeLifecycleRequest("r1", pod, requester).Obj())
	f.cache(pod)

	er := f.syncRequest("r1")

	if !lifecycleutil.IsTrue(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted) {
		t.Errorf("the request of a deleted pod reports %v, want TargetEvicted", conditionsOf(er.Status.Conditions))
	}
	if diff := cmp.Diff([]string{"pod-1-web"}, f.evictionNames()); diff != "" {
		t.Errorf("Evictions (-want +got):\n%s", diff)
	}
}

// An Eviction whose status someone set up before the controller could,
// with other responders than the pod's or with the entry of a responder
// whose turn has not come already filled in (a completion there would end
// its turn the moment it started), fails as invalid, its active responder
// Interrupted as kube-apiserver requires of a failing Eviction, and a new
// Eviction takes its place.
func TestAnEvictionWhoseRespondersAreNotThePodsFails(t *testing.T) {
	for name, tc := range map[string]struct {
		eviction *lifecyclev1alpha1.Eviction
		message  string
	}{
		"only the evictor, skipping the pod's responders": {
			eviction: wrappers.MakeEviction("pod-1-web", podWithResponders).Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
				TargetResponder(evictor, lifecycleutil.EvictorPriority, active).Started(evictor, start).Obj(),
			message: MessageRespondersNotThePods,
		},
		"a responder's priority raised above the others": {
			eviction: wrappers.MakeEviction("pod-1-web", podWithResponders).Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
				TargetResponder("acme.io/surge", 10000, idle).TargetResponder("acme.io/backup", 20000, active).
				TargetResponder(evictor, lifecycleutil.EvictorPriority, idle).Started("acme.io/backup", start).Obj(),
			message: MessageRespondersNotThePods,
		},
		"the next responder's completion written before its turn": {
			eviction: running().Started("acme.io/backup", start).CompletedAt("acme.io/backup", start).Obj(),
			message:  fmt.Sprintf(MessageResponderBeforeItsTurn, "acme.io/backup"),
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, podWithResponders, tc.eviction, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
			ev, _ := f.syncEviction("pod-1-web")
			if diff := cmp.Diff([]string{"Failed=True/EvictionInvalid", "TargetEvicted=False/EvictionFailed"}, conditionsOf(ev.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if got := lifecycleutil.Condition(ev.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed).Message; got != tc.message {
				t.Errorf("message = %q, want %q", got, tc.message)
			}
			for _, r := range ev.Status.TargetResponders {
				if r.State == active {
					t.Errorf("responder %s is still active in a failed Eviction", r.Name)
				}
			}
			if got := f.events(); len(got) != 1 || got[0] != "Warning "+EventInvalid {
				t.Errorf("events %v, want one %s warning", got, EventInvalid)
			}
			er := f.syncRequest("r1")
			if lifecycleutil.IsRequestFinished(er) {
				t.Errorf("the request is finished: %v", conditionsOf(er.Status.Conditions))
			}
			if diff := cmp.Diff([]string{"pod-1-web", "pod-2-web"}, f.evictionNames()); diff != "" {
				t.Errorf("Evictions (-want +got):\n%s", diff)
			}
		})
	}
}

// The Evictions the controller sets up, and kube-controller-manager's,
// which sets them up alike, are trusted through their whole course.
func TestTheControllersOwnEvictionsAreTrusted(t *testing.T) {
	f := newFixture(t, podWithResponders, wrappers.MakeEviction("pod-1-web", podWithResponders).Obj(),
		wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
	ev, _ := f.syncEviction("pod-1-web")
	for range 3 {
		// The active responder completes; the next one's turn starts.
		name := lifecycleutil.ActiveResponder(ev)
		if name == "" {
			break
		}
		f.clock.Step(time.Second)
		for i := range ev.Status.Responders {
			if ev.Status.Responders[i].Name == name {
				ev.Status.Responders[i].CompletionTime = &metav1.Time{Time: f.clock.Now()}
			}
		}
		f.update(ev)
		ev, _ = f.syncEviction("pod-1-web")
		if lifecycleutil.FailureReason(ev) == lifecyclev1alpha1.EvictionConditionReasonEvictionInvalid {
			t.Fatalf("the controller's own Eviction failed as invalid after %s completed: %v", name, conditionsOf(ev.Status.Conditions))
		}
	}
}
