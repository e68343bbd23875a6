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

package participant

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

var lifecycleStart = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func lifecycleEviction() *wrappers.EvictionWrapper {
	pod := wrappers.MakePod("web").Obj()
	return wrappers.MakeEviction("pod-1-web", pod).
		TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder(lifecycleutil.Evictor, 100, lifecyclev1alpha1.ResponderStateActive).Started(lifecycleutil.Evictor, lifecycleStart)
}

var lifecycleStatusCases = map[string]struct {
	request   *lifecyclev1alpha1.EvictionRequest
	evictions []*lifecyclev1alpha1.Eviction
	want      Status
}{
	"no request of the participant: the pod's eviction as others asked for it": {
		evictions: []*lifecyclev1alpha1.Eviction{lifecycleEviction().Obj()},
		want:      Status{Evicting: true, LastHeartbeat: &lifecycleStart},
	},
	"a request with no Eviction yet": {
		request: wrappers.MakeLifecycleRequest("r", wrappers.MakePod("web").Obj(), "acme.io/drain").Obj(),
		want:    Status{Exists: true, Requested: true, AwaitingInterceptor: true},
	},
	"a responder at work": {
		request: wrappers.MakeLifecycleRequest("r", wrappers.MakePod("web").Obj(), "acme.io/drain").Obj(),
		evictions: []*lifecyclev1alpha1.Eviction{wrappers.MakeEviction("pod-1-web", wrappers.MakePod("web").Obj()).
			TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateActive).Started("acme.io/surge", lifecycleStart).
			ResponderMessage("acme.io/surge", "surging").Obj()},
		want: Status{Exists: true, Requested: true, ActiveInterceptor: "acme.io/surge", Message: "surging", LastHeartbeat: &lifecycleStart},
	},
	"the evictor refused by a budget": {
		request: wrappers.MakeLifecycleRequest("r", wrappers.MakePod("web").Obj(), "acme.io/drain").Obj(),
		evictions: []*lifecyclev1alpha1.Eviction{lifecycleEviction().Heartbeat(lifecycleutil.Evictor, lifecycleStart).
			ResponderMessage(lifecycleutil.Evictor, "Eviction failed (attempts=2): ...").Obj()},
		want: Status{Exists: true, Requested: true, Evicting: true, FailedEvictions: 2, Message: "Eviction failed (attempts=2): ...", LastHeartbeat: &lifecycleStart},
	},
	"evicted": {
		request: wrappers.MakeLifecycleRequest("r", wrappers.MakePod("web").Obj(), "acme.io/drain").Obj(),
		evictions: []*lifecyclev1alpha1.Eviction{lifecycleEviction().
			Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, lifecycleStart).Obj()},
		want: Status{Exists: true, Requested: true, Complete: true, LastHeartbeat: &lifecycleStart},
	},
	"canceled": {
		request: wrappers.MakeLifecycleRequest("r", wrappers.MakePod("web").Obj(), "acme.io/drain").Withdrawn().Obj(),
		evictions: []*lifecyclev1alpha1.Eviction{lifecycleEviction().
			Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters, lifecycleStart).Obj()},
		want: Status{Exists: true, Complete: true, Canceled: true, LastHeartbeat: &lifecycleStart},
	},
	"no responder left: another Eviction follows": {
		request: wrappers.MakeLifecycleRequest("r", wrappers.MakePod("web").Obj(), "acme.io/drain").Obj(),
		evictions: []*lifecyclev1alpha1.Eviction{lifecycleEviction().
			Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonNoFurtherResponder, lifecycleStart).Obj()},
		want: Status{Exists: true, Requested: true, LastHeartbeat: &lifecycleStart},
	},
}

func TestLifecycleStatus(t *testing.T) {
	for name, tc := range lifecycleStatusCases {
		t.Run(name, func(t *testing.T) {
			got := LifecycleStatus(tc.request, tc.evictions, "acme.io/drain")
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("LifecycleStatus() (-want +got):\n%s", diff)
			}
		})
	}
}
