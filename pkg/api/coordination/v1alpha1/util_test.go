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

package v1alpha1

import (
	"testing"
	"time"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

func TestRules(t *testing.T) {
	pod := wrappers.MakePod("web-0").Obj()
	const me = "a.example.com"
	for _, tc := range []struct {
		name                                    string
		er                                      *v1alpha1.EvictionRequest
		complete, canceled, forbidden, heldByMe bool
		reason                                  string
	}{
		{name: "just created", er: wrappers.MakeEvictionRequest(pod, "r.example.com").Interceptors(me).Obj()},
		{name: "held", er: wrappers.MakeEvictionRequest(pod, "r.example.com").Interceptors(me).Active(me).Obj(), heldByMe: true},
		{name: "held under Forbid", er: wrappers.MakeEvictionRequest(pod, "r.example.com").Interceptors(me).Active(me).Policy(v1alpha1.Forbid).Obj(), heldByMe: true, forbidden: true},
		{name: "its turn done", er: wrappers.MakeEvictionRequest(pod, "r.example.com").Interceptors(me).Active(me).ActiveCompleted().Obj()},
		{name: "another's turn", er: wrappers.MakeEvictionRequest(pod, "r.example.com").Interceptors(me, "b.example.com").Active("b.example.com").Obj()},
		{name: "complete", er: wrappers.MakeEvictionRequest(pod, "r.example.com").Complete(v1alpha1.CompleteReasonPodDeleted, "done").Obj(), complete: true, reason: v1alpha1.CompleteReasonPodDeleted},
		{name: "canceled", er: wrappers.MakeEvictionRequest(pod).Complete(v1alpha1.CompleteReasonCanceled, "done").Obj(), complete: true, canceled: true, reason: v1alpha1.CompleteReasonCanceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsComplete(tc.er); got != tc.complete {
				t.Errorf("IsComplete() = %v", got)
			}
			if got := IsCanceled(tc.er); got != tc.canceled {
				t.Errorf("IsCanceled() = %v", got)
			}
			if got := CompletionReason(tc.er); got != tc.reason {
				t.Errorf("CompletionReason() = %q", got)
			}
			if got := CancellationForbidden(tc.er); got != tc.forbidden {
				t.Errorf("CancellationForbidden() = %v", got)
			}
			if got := IsHeldBy(tc.er, me); got != tc.heldByMe {
				t.Errorf("IsHeldBy() = %v", got)
			}
			if IsHeldBy(tc.er, "") {
				t.Error("IsHeldBy of no name is true")
			}
		})
	}
}

func TestRequesters(t *testing.T) {
	er := wrappers.MakeEvictionRequest(wrappers.MakePod("web-0").Obj(), "a.example.com", "b.example.com").Obj()
	if RequesterIndex(er, "b.example.com") != 1 || HasRequester(er, "c.example.com") || len(RequesterNames(er)) != 2 {
		t.Errorf("requesters of %v: index %d, has c %v, names %v", er.Spec.Requesters, RequesterIndex(er, "b.example.com"), HasRequester(er, "c.example.com"), RequesterNames(er))
	}
}

// The eviction step comes once no interceptor is left: none declared, or
// the last one's turn ended by completion or by its deadline.
func TestAtEvictionStep(t *testing.T) {
	created := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	pod := wrappers.MakePod("web-0").Obj()
	// Index 0 takes the last turn.
	withInterceptors := func() *wrappers.EvictionRequestWrapper {
		return wrappers.MakeEvictionRequest(pod, "r.example.com").Created(created).HeartbeatDeadlineSeconds(600).Interceptors("last.example.com", "first.example.com")
	}
	for name, tc := range map[string]struct {
		er   *v1alpha1.EvictionRequest
		now  time.Time
		want bool
	}{
		"no interceptor":                   {er: wrappers.MakeEvictionRequest(pod, "r.example.com").Obj(), now: created, want: true},
		"none selected yet":                {er: withInterceptors().Obj(), now: created},
		"the first one works":              {er: withInterceptors().Active("first.example.com").Obj(), now: created},
		"the first one completed":          {er: withInterceptors().Active("first.example.com").ActiveCompleted().Obj(), now: created},
		"the last one works":               {er: withInterceptors().Active("last.example.com").Heartbeat(created).Obj(), now: created.Add(time.Minute)},
		"the last one completed":           {er: withInterceptors().Active("last.example.com").ActiveCompleted().Obj(), now: created, want: true},
		"the last one missed its deadline": {er: withInterceptors().Active("last.example.com").Heartbeat(created).Obj(), now: created.Add(10 * time.Minute), want: true},
		"the last one heartbeat in time":   {er: withInterceptors().Active("last.example.com").Heartbeat(created.Add(5 * time.Minute)).Obj(), now: created.Add(10 * time.Minute)},
	} {
		if got := AtEvictionStep(tc.er, tc.now); got != tc.want {
			t.Errorf("%s: AtEvictionStep() = %v, want %v", name, got, tc.want)
		}
	}
}
