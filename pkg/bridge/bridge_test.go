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

package bridge

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

const drainer = "system:serviceaccount:kube-system:node-drainer"

// A pod that declares no interceptor is evicted as without the bridge: it
// passes, and nothing is written.
func TestAPodWithoutInterceptorsPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := wrappers.MakePod("plain").UID("uid-plain").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		if d := f.decide(pod, drainer, false); !d.Allowed || d.Outcome != OutcomeNoParticipants {
			t.Errorf("decision %+v, want allowed with no participants", d)
		}
		if w := append(writes(f.kube.Actions()), writes(f.evr.Actions())...); len(w) != 0 {
			t.Errorf("the bridge wrote %v", w)
		}
	})
}

// The first eviction of a pod with interceptors asks for the pod's
// eviction as the bridge and is refused with 429 naming the request; the
// caller is recorded on the request, as an event and an annotation.
func TestAnEvictionOfAnInterceptedPodRequestsItAndIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		d := f.decide(pod, drainer, false)
		if d.Allowed || d.Outcome != OutcomeRequested || d.RetryAfter != DefaultRetryAfter {
			t.Fatalf("decision %+v, want a refusal that requested the eviction", d)
		}
		for _, want := range []string{Evacuation, "evictionrequest/uid-db-0", "coordination.k8s.io"} {
			if !strings.Contains(d.Message, want) {
				t.Errorf("message %q lacks %q", d.Message, want)
			}
		}
		s := f.status(pod)
		if !s.Requested || s.Annotations[CallersAnnotation] != drainer || s.Annotations[LastCallAnnotation] == "" {
			t.Errorf("request %+v: want the bridge among its requesters, the caller and the call recorded", s)
		}
		if event := <-f.recorder.Events; !strings.Contains(event, EventRequestedThroughEvictionAPI) || !strings.Contains(event, drainer) {
			t.Errorf("event %q, want the caller named", event)
		}
		// The next call finds the request in progress, its interceptor's turn.
		f.setActive(pod, "surge.example.com")
		d = f.decide(pod, drainer, false)
		if d.Allowed || d.Outcome != OutcomeInProgress || !strings.Contains(d.Message, "it is the turn of surge.example.com") {
			t.Errorf("decision %+v, want a refusal naming the active interceptor", d)
		}
	})
}

// Once no interceptor is left, evictions pass: the controller's and the
// caller's next retry alike.
func TestEvictionsPassAtTheEvictionStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		er := wrappers.MakeEvictionRequest(pod, CoordinationRequester).Interceptors("surge.example.com").Active("surge.example.com").ActiveCompleted().Obj()
		f := newFixture(t, evictionapi.Coordination, pod, er)
		if d := f.decide(pod, drainer, false); !d.Allowed || d.Outcome != OutcomeEvictionStep {
			t.Errorf("decision %+v, want allowed at the eviction step", d)
		}
	})
}

// A dry run is answered as the real eviction would be, and writes nothing.
func TestADryRunWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		if d := f.decide(pod, drainer, true); d.Allowed || d.Outcome != OutcomeRequested {
			t.Errorf("decision %+v, want the refusal a real eviction gets", d)
		}
		if w := append(writes(f.kube.Actions()), writes(f.evr.Actions())...); len(w) != 0 {
			t.Errorf("a dry run wrote %v", w)
		}
	})
}

// The defined answers: a pod already terminating or gone passes, an exempt
// identity passes, a request that forbids cancellation is refused without
// joining it, a request complete otherwise than canceled passes.
func TestDefinedAnswers(t *testing.T) {
	terminating := interceptedPod("leaving").Terminating(time.Now()).Obj()
	forbidding := interceptedPod("migrating").Obj()
	completed := interceptedPod("done").Obj()
	for name, tc := range map[string]struct {
		pod     *corev1.Pod
		absent  bool
		objects []any
		user    string
		allowed bool
		outcome string
	}{
		"a terminating pod":         {pod: terminating, allowed: true, outcome: OutcomePodTerminating},
		"a pod that does not exist": {pod: interceptedPod("ghost").Obj(), absent: true, allowed: true, outcome: OutcomePodGone},
		"an exempt identity":        {pod: interceptedPod("own").Obj(), user: "system:serviceaccount:evictionrequest-system:evictionrequest-apiserver", allowed: true, outcome: OutcomeExempt},
		// Created now, outside the bubble whose clock starts in 2000: its
		// interceptor is well within its deadline.
		"a request that forbids cancellation": {pod: forbidding, objects: []any{wrappers.MakeEvictionRequest(forbidding, "other.example.com").
			Created(time.Now()).Interceptors("surge.example.com").Active("surge.example.com").Policy(v1alpha1.Forbid).Obj()}, outcome: OutcomeForbidden},
		"a complete request": {pod: completed, objects: []any{wrappers.MakeEvictionRequest(completed, "other.example.com").
			Complete(v1alpha1.CompleteReasonPodTerminated, "terminated").Obj()}, allowed: true, outcome: OutcomeComplete},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				objects := objectsOf(tc.pod, tc.objects)
				if tc.absent {
					objects = objects[1:]
				}
				f := newFixture(t, evictionapi.Coordination, objects...)
				user := tc.user
				if user == "" {
					user = drainer
				}
				if d := f.decide(tc.pod, user, false); d.Allowed != tc.allowed || d.Outcome != tc.outcome {
					t.Errorf("decision %+v, want allowed %v, outcome %s", d, tc.allowed, tc.outcome)
				}
				if tc.outcome == OutcomeForbidden && slices.Contains(writes(f.evr.Actions()), "patch evictionrequests") {
					t.Error("the bridge joined a request whose requesters are locked")
				}
			})
		})
	}
}

// A pod the descheduler evicts in the background is marked
// eviction-in-progress when the bridge requests its eviction.
func TestTheDeschedulerConvention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Annotation(RequestEvictOnlyAnnotation, "").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		f.decide(pod, "system:serviceaccount:kube-system:descheduler", false)
		if !f.podAnnotated(pod, EvictionInProgressAnnotation) {
			t.Error("the pod is not marked eviction-in-progress")
		}
	})
}

// On lifecycle.k8s.io the bridge asks through a request of its own, and
// evictions pass once the default evictor has its turn.
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := wrappers.MakePod("db-0").UID("uid-db-0").Responders(wrappers.Responder("example.com/surge", 10000)).Obj()
		f := newFixture(t, evictionapi.Lifecycle, pod)
		d := f.decide(pod, drainer, false)
		if d.Allowed || d.Outcome != OutcomeRequested || !strings.Contains(d.Message, "lifecycle.k8s.io") {
			t.Fatalf("decision %+v, want a refusal that requested the eviction", d)
		}
		if s := f.status(pod); !s.Requested || !strings.HasPrefix(s.Request, "uid-db-0-") {
			t.Errorf("status %+v: want the bridge's own request", s)
		}
		f.evictorActive(pod)
		if d := f.decide(pod, drainer, false); !d.Allowed || d.Outcome != OutcomeEvictionStep {
			t.Errorf("decision %+v, want allowed once the evictor has its turn", d)
		}
	})
}
