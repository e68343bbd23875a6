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
