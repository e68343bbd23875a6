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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

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

func TestAFinishedEvictionIsLeftAsItIs(t *testing.T) {
	ev := running().Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, start).Obj()
	f := newFixture(t, ev, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Withdrawn().Obj())
	got, _ := f.syncEviction("pod-1-web")
	if diff := cmp.Diff(ev.Status, got.Status); diff != "" {
		t.Errorf("status changed (-want +got):\n%s", diff)
	}
}
