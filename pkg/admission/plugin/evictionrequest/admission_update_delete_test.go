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

package evictionrequest

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

func TestValidateUpdate(t *testing.T) {
	addRequester := func(er *coordination.EvictionRequest) {
		er.Spec.Requesters = append(er.Spec.Requesters, coordination.Requester{Name: "descheduler.example.com"})
	}
	dropRequesters := func(er *coordination.EvictionRequest) { er.Spec.Requesters = nil }
	forbid := func(er *coordination.EvictionRequest) {
		er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Forbid)
	}
	complete := func(er *coordination.EvictionRequest) {
		er.Status.Conditions = []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: "PodDeleted"}}
	}
	cases := map[string]struct {
		old         []func(*coordination.EvictionRequest)
		change      func(*coordination.EvictionRequest)
		subresource string
		user        string
		wantRefusal string
	}{
		"requesters may change under Allow":      {change: addRequester},
		"requesters may be emptied under Allow":  {change: dropRequesters},
		"requesters are locked under Forbid":     {old: []func(*coordination.EvictionRequest){forbid}, change: dropRequesters, wantRefusal: "422 FieldValueForbidden spec.requesters"},
		"adding a requester is locked too":       {old: []func(*coordination.EvictionRequest){forbid}, change: addRequester, wantRefusal: "422 FieldValueForbidden spec.requesters"},
		"requesters are locked once Complete":    {old: []func(*coordination.EvictionRequest){complete}, change: addRequester, wantRefusal: "422 FieldValueForbidden spec.requesters"},
		"other changes under Forbid are allowed": {old: []func(*coordination.EvictionRequest){forbid}, change: func(er *coordination.EvictionRequest) { er.Labels["x"] = "y" }},
		"a status update is not a requester change": {
			old: []func(*coordination.EvictionRequest){forbid}, change: dropRequesters, subresource: "status",
		},
		"a caller who may not delete the pod may not update": {change: addRequester, user: "intern", wantRefusal: "403"},
		// A status write can end an interceptor's turn: KEP-4563 asks the
		// right to delete the pod of it as of every update.
		"a caller who may not delete the pod may not update status": {
			change: func(er *coordination.EvictionRequest) { er.Status.Message = "hi" }, subresource: "status", user: "intern", wantRefusal: "403",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plugin := newPlugin(t, []runtime.Object{newPod()}, []runtime.Object{newPod()})
			oldER := newEvictionRequest(tc.old...)
			newER := oldER.DeepCopy()
			tc.change(newER)
			if tc.user == "" {
				tc.user = allowedUser
			}
			err := plugin.Validate(context.Background(), attributes(admission.Update, tc.subresource, tc.user, newER, oldER), nil)
			if got := refusal(err); got != tc.wantRefusal {
				t.Errorf("refusal = %q, want %q (error: %v)", got, tc.wantRefusal, err)
			}
		})
	}
}

func TestValidateDelete(t *testing.T) {
	forbid := func(er *coordination.EvictionRequest) {
		er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Forbid)
	}
	cases := map[string]struct {
		live        []runtime.Object
		policy      func(*coordination.EvictionRequest)
		user        string
		wantRefusal string
	}{
		"Allow may be deleted while the pod runs":      {live: []runtime.Object{newPod()}},
		"Forbid may not be deleted while the pod runs": {live: []runtime.Object{newPod()}, policy: forbid, wantRefusal: "403"},
		"Forbid may not be deleted while the pod is pending": {
			live: []runtime.Object{newPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending })}, policy: forbid, wantRefusal: "403",
		},
		"Forbid may be deleted once the pod is gone": {policy: forbid},
		"Forbid may be deleted once the pod failed": {
			live: []runtime.Object{newPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed; p.Status.Reason = "Terminated" })}, policy: forbid,
		},
		"Forbid may be deleted once the pod succeeded": {
			live: []runtime.Object{newPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })}, policy: forbid,
		},
		"Forbid may be deleted once the pod was replaced": {
			live: []runtime.Object{newPod(func(p *corev1.Pod) { p.UID = "new-uid" })}, policy: forbid,
		},
		"a caller who may not delete the pod may not delete the request": {live: []runtime.Object{newPod()}, user: "intern", wantRefusal: "403"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The cache still shows the running pod: only the live state may
			// keep the request from being deleted.
			plugin := newPlugin(t, []runtime.Object{newPod()}, tc.live)
			er := newEvictionRequest()
			if tc.policy != nil {
				tc.policy(er)
			}
			if tc.user == "" {
				tc.user = allowedUser
			}
			err := plugin.Validate(context.Background(), attributes(admission.Delete, "", tc.user, nil, er), nil)
			if got := refusal(err); got != tc.wantRefusal {
				t.Errorf("refusal = %q, want %q (error: %v)", got, tc.wantRefusal, err)
			}
			if tc.wantRefusal == "403" && tc.policy != nil && !strings.Contains(err.Error(), "evictionRequestCancellationPolicy is Forbid") {
				t.Errorf("the refusal %q does not name the cancellation policy", err)
			}
		})
	}
}
