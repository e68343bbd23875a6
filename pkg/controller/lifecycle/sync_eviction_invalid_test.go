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
