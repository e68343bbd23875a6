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
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

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
