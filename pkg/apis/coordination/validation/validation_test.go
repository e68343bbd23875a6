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

package validation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

const podUID = "8d3b7c1e-5f0a-4c1b-9e7d-2a6f4b8c9d01"

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func validEvictionRequest() *coordination.EvictionRequest {
	return &coordination.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name:              podUID,
			Namespace:         "default",
			ResourceVersion:   "1",
			CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
		},
		Spec: coordination.EvictionRequestSpec{
			Type:                     coordination.Soft,
			Target:                   coordination.EvictionTarget{PodRef: &coordination.LocalPodReference{Name: "web-0", UID: podUID}},
			Requesters:               []coordination.Requester{{Name: "nodemaintenance.k8s.io"}},
			Interceptors:             []coordination.Interceptor{{Name: "a.example.com"}, {Name: "b.example.com"}, {Name: "c.example.com"}},
			HeartbeatDeadlineSeconds: ptr.To[int32](600),
		},
		Status: coordination.EvictionRequestStatus{
			EvictionRequestCancellationPolicy: ptr.To(coordination.Allow),
		},
	}
}

// errorKeys reduces an error list to "<type> <field>" pairs, the two things a
// client can rely on; the details are for humans.
func errorKeys(errs field.ErrorList) []string {
	keys := make([]string, 0, len(errs))
	for _, err := range errs {
		keys = append(keys, fmt.Sprintf("%s %s", string(err.Type), err.Field))
	}
	return keys
}

func expectErrors(t *testing.T, got field.ErrorList, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, errorKeys(got)); diff != "" {
		t.Errorf("unexpected errors (-want +got):\n%s\nall errors: %v", diff, got)
	}
}

func requesters(n int) []coordination.Requester {
	list := make([]coordination.Requester, n)
	for i := range list {
		list[i].Name = fmt.Sprintf("requester-%d.example.com", i)
	}
	return list
}

func interceptors(n int) []coordination.Interceptor {
	list := make([]coordination.Interceptor, n)
	for i := range list {
		list[i].Name = fmt.Sprintf("interceptor-%d.example.com", i)
	}
	return list
}

// createCases are the cases of TestValidateEvictionRequest: a change of a valid request, and the errors it must get.
var createCases = map[string]struct {
	mutate func(er *coordination.EvictionRequest)
	want   []string
}{
	"valid": {
		mutate: func(er *coordination.EvictionRequest) {},
	},
	"generateName is refused": {
		mutate: func(er *coordination.EvictionRequest) { er.GenerateName = "evr-" },
		want:   []string{"FieldValueForbidden metadata.generateName"},
	},
	"name must equal the pod UID": {
		mutate: func(er *coordination.EvictionRequest) { er.Name = "web-0" },
		want:   []string{"FieldValueInvalid metadata.name"},
	},
	"namespace is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Namespace = "" },
		want:   []string{"FieldValueRequired metadata.namespace"},
	},
	"type is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Type = "" },
		want:   []string{"FieldValueRequired spec.type"},
	},
	"type Hard is not supported": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Type = "Hard" },
		want:   []string{"FieldValueNotSupported spec.type"},
	},
	"podRef is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef = nil },
		want:   []string{"FieldValueRequired spec.target.podRef"},
	},
	"podRef name is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef.Name = "" },
		want:   []string{"FieldValueRequired spec.target.podRef.name"},
	},
	"podRef name must be a DNS subdomain": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef.Name = "Web_0" },
		want:   []string{"FieldValueInvalid spec.target.podRef.name"},
	},
	"podRef uid is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef.UID = "" },
		want:   []string{"FieldValueRequired spec.target.podRef.uid"},
	},
	"at least one requester on create": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = nil },
		want:   []string{"FieldValueRequired spec.requesters"},
	},
	"100 requesters are accepted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = requesters(100) },
	},
	"101 requesters are too many": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = requesters(101) },
		want:   []string{"FieldValueTooMany spec.requesters"},
	},
	"requester name is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters[0].Name = "" },
		want:   []string{"FieldValueRequired spec.requesters[0].name"},
	},
	"requester name must be a DNS subdomain": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters[0].Name = "Node Maintenance" },
		want:   []string{"FieldValueInvalid spec.requesters[0].name"},
	},
	"requesters must be unique": {
		mutate: func(er *coordination.EvictionRequest) {
			er.Spec.Requesters = []coordination.Requester{{Name: "a.example.com"}, {Name: "a.example.com"}}
		},
		want: []string{"FieldValueDuplicate spec.requesters[1].name"},
	},
	"requesters in k8s.io are not restricted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters[0].Name = "descheduler.k8s.io" },
	},
	"no interceptors are accepted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = nil },
	},
	"100 interceptors are accepted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = interceptors(100) },
	},
	"101 interceptors are too many": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = interceptors(101) },
		want:   []string{"FieldValueTooMany spec.interceptors"},
	},
	"interceptor name must be a DNS subdomain": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[1].Name = "-b.example.com" },
		want:   []string{"FieldValueInvalid spec.interceptors[1].name"},
	},
	"interceptor name is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[2].Name = "" },
		want:   []string{"FieldValueRequired spec.interceptors[2].name"},
	},
	"interceptors must be unique": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[2].Name = "a.example.com" },
		want:   []string{"FieldValueDuplicate spec.interceptors[2].name"},
	},
	"every allow-listed k8s.io interceptor is accepted": {
		mutate: func(er *coordination.EvictionRequest) {
			er.Spec.Interceptors = nil
			for _, name := range []string{"replicaset.apps.k8s.io", "deployment.apps.k8s.io", "statefulset.apps.k8s.io",
				"daemonset.apps.k8s.io", "horizontalpodautoscaler.autoscaling.k8s.io", "nodemaintenance.k8s.io"} {
				er.Spec.Interceptors = append(er.Spec.Interceptors, coordination.Interceptor{Name: name})
			}
		},
	},
	"k8s.io interceptor off the allow-list is refused": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[0].Name = "actor-a.k8s.io" },
		want:   []string{"FieldValueInvalid spec.interceptors[0].name"},
	},
	"k8s.io itself is reserved": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[0].Name = "k8s.io" },
		want:   []string{"FieldValueInvalid spec.interceptors[0].name"},
	},
	"subdomain of an allow-listed name is refused": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[0].Name = "x.nodemaintenance.k8s.io" },
		want:   []string{"FieldValueInvalid spec.interceptors[0].name"},
	},
	"a name merely ending in k8s.io is not reserved": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[0].Name = "notk8s.io" },
	},
	"heartbeat deadline is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = nil },
		want:   []string{"FieldValueRequired spec.heartbeatDeadlineSeconds"},
	},
	"heartbeat deadline 599 is too short": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](599) },
		want:   []string{"FieldValueInvalid spec.heartbeatDeadlineSeconds"},
	},
	"heartbeat deadline 86400 is accepted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](86400) },
	},
	"heartbeat deadline 86401 is too long": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](86401) },
		want:   []string{"FieldValueInvalid spec.heartbeatDeadlineSeconds"},
	},
}

func TestValidateEvictionRequest(t *testing.T) {
	cases := createCases
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			er := validEvictionRequest()
			er.ResourceVersion = "" // as sent for creation
			tc.mutate(er)
			expectErrors(t, ValidateEvictionRequest(er), tc.want...)
		})
	}
}

func TestValidateEvictionRequestUpdate(t *testing.T) {
	cases := map[string]struct {
		mutate func(er *coordination.EvictionRequest)
		want   []string
	}{
		"no change": {
			mutate: func(er *coordination.EvictionRequest) {},
		},
		"requesters may be added": {
			mutate: func(er *coordination.EvictionRequest) {
				er.Spec.Requesters = append(er.Spec.Requesters, coordination.Requester{Name: "descheduling.avalanche.io"})
			},
		},
		"requesters may be emptied to cancel": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = nil },
		},
		"requesters stay unique": {
			mutate: func(er *coordination.EvictionRequest) {
				er.Spec.Requesters = append(er.Spec.Requesters, er.Spec.Requesters[0])
			},
			want: []string{"FieldValueDuplicate spec.requesters[1].name"},
		},
		"type is immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Type = "Hard" },
			want:   []string{"FieldValueNotSupported spec.type", "FieldValueInvalid spec.type"},
		},
		"target is immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef.Name = "web-1" },
			want:   []string{"FieldValueInvalid spec.target"},
		},
		"interceptors are immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = er.Spec.Interceptors[1:] },
			want:   []string{"FieldValueInvalid spec.interceptors"},
		},
		"heartbeat deadline is immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](1800) },
			want:   []string{"FieldValueInvalid spec.heartbeatDeadlineSeconds"},
		},
		"name is immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Name = "other" },
			want:   []string{"FieldValueInvalid metadata.name"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oldER := validEvictionRequest()
			newER := oldER.DeepCopy()
			tc.mutate(newER)
			expectErrors(t, ValidateEvictionRequestUpdate(newER, oldER), tc.want...)
		})
	}
}

func completeCondition(status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{
		Type:               string(coordination.EvictionRequestComplete),
		Status:             status,
		Reason:             "PodDeleted",
		LastTransitionTime: metav1.NewTime(now),
	}
}

// conditions returns n valid conditions with messages of the given length.
func conditions(n, messageBytes int) []metav1.Condition {
	out := make([]metav1.Condition, n)
	for i := range out {
		out[i] = metav1.Condition{Type: fmt.Sprintf("Type%d", i), Status: metav1.ConditionFalse, Reason: "Reason",
			Message: strings.Repeat("m", messageBytes), LastTransitionTime: metav1.NewTime(now)}
	}
	return out
}

// withActive makes name the active interceptor of a request.
func withActive(name string) func(er *coordination.EvictionRequest) {
	return func(er *coordination.EvictionRequest) { er.Status.ActiveInterceptorName = ptr.To(name) }
}

// statusUpdateCases are the cases of TestValidateEvictionRequestStatusUpdate: the status before and after, and the errors the update must get.
var statusUpdateCases = map[string]struct {
	old  func(er *coordination.EvictionRequest)
	new  func(er *coordination.EvictionRequest)
	want []string
}{
	"no change": {
		new: func(er *coordination.EvictionRequest) {},
	},
	"message of 32768 bytes is accepted": {
		new: func(er *coordination.EvictionRequest) { er.Status.Message = strings.Repeat("x", 32768) },
	},
	"message of 32769 bytes is too long": {
		new:  func(er *coordination.EvictionRequest) { er.Status.Message = strings.Repeat("x", 32769) },
		want: []string{"FieldValueTooLong status.message"},
	},
	"8 conditions besides Complete are accepted": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = append(conditions(8, 10), completeCondition(metav1.ConditionFalse))
		},
	},
	"9 conditions besides Complete are too many": {
		new:  func(er *coordination.EvictionRequest) { er.Status.Conditions = conditions(9, 10) },
		want: []string{"FieldValueTooMany status.conditions"},
	},
	"25000 conditions are refused as too many, without a check of each": {
		new:  func(er *coordination.EvictionRequest) { er.Status.Conditions = conditions(25000, 1) },
		want: []string{"FieldValueTooMany status.conditions", "FieldValueTooLong status"},
	},
	"64 KiB of interceptor text is accepted": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = append(conditions(2, 32768-len("Type0")-len("Reason")), completeCondition(metav1.ConditionFalse))
			// The controller's own text does not count.
			er.Status.Message = strings.Repeat("x", 32768)
			er.Status.Conditions[2].Message = strings.Repeat("c", 32768)
		},
	},
	"over 64 KiB of interceptor text is too long": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = conditions(2, 32768)
		},
		want: []string{"FieldValueTooLong status"},
	},
	"heartbeat 10s in the future is tolerated": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(now.Add(10 * time.Second)))
		},
	},
	"heartbeat 11s in the future is refused": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(now.Add(11 * time.Second)))
		},
		want: []string{"FieldValueInvalid status.heartbeatTime"},
	},
	"cancellation policy Forbid is accepted": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Forbid)
		},
	},
	"cancellation policy is required": {
		new:  func(er *coordination.EvictionRequest) { er.Status.EvictionRequestCancellationPolicy = nil },
		want: []string{"FieldValueRequired status.evictionRequestCancellationPolicy"},
	},
	"cancellation policy must be Allow or Forbid": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.EvictionRequestCancellationPolicy = ptr.To[coordination.EvictionRequestCancellationPolicy]("Maybe")
		},
		want: []string{"FieldValueNotSupported status.evictionRequestCancellationPolicy"},
	},
	"failed eviction counter may increase": {
		old: func(er *coordination.EvictionRequest) {
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 2}
		},
		new: func(er *coordination.EvictionRequest) {
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 3}
		},
	},
	"failed eviction counter may not decrease": {
		old: func(er *coordination.EvictionRequest) {
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 3}
		},
		new: func(er *coordination.EvictionRequest) {
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 2}
		},
		want: []string{"FieldValueInvalid status.podEvictionStatus.failedAPIEvictionCounter"},
	},
	"failed eviction counter may not be dropped": {
		old: func(er *coordination.EvictionRequest) {
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 1}
		},
		new:  func(er *coordination.EvictionRequest) { er.Status.PodEvictionStatus = nil },
		want: []string{"FieldValueInvalid status.podEvictionStatus.failedAPIEvictionCounter"},
	},
	"failed eviction counter may not be negative": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: -1}
		},
		want: []string{
			"FieldValueInvalid status.podEvictionStatus.failedAPIEvictionCounter",
			"FieldValueInvalid status.podEvictionStatus.failedAPIEvictionCounter",
		},
	},
	"pod eviction status needs a podRef": {
		old: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef = nil },
		new: func(er *coordination.EvictionRequest) {
			er.Spec.Target.PodRef = nil
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 1}
		},
		want: []string{"FieldValueForbidden status.podEvictionStatus"},
	},
	"conditions are validated": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = []metav1.Condition{completeCondition("Maybe")}
		},
		want: []string{"FieldValueNotSupported status.conditions[0].status"},
	},
	"Complete may become True": {
		new: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = []metav1.Condition{completeCondition(metav1.ConditionTrue)}
		},
	},
	"Complete=True may not become False": {
		old: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = []metav1.Condition{completeCondition(metav1.ConditionTrue)}
		},
		new: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = []metav1.Condition{completeCondition(metav1.ConditionFalse)}
		},
		want: []string{"FieldValueForbidden status.conditions"},
	},
	"Complete=True may not be removed": {
		old: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = []metav1.Condition{completeCondition(metav1.ConditionTrue)}
		},
		new:  func(er *coordination.EvictionRequest) { er.Status.Conditions = nil },
		want: []string{"FieldValueForbidden status.conditions"},
	},
	"first active interceptor is the highest index": {
		new: withActive("c.example.com"),
	},
	"first active interceptor may not be a lower index": {
		new:  withActive("b.example.com"),
		want: []string{"FieldValueInvalid status.activeInterceptorName"},
	},
	"no interceptor can be active without interceptors": {
		old: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = nil },
		new: func(er *coordination.EvictionRequest) {
			er.Spec.Interceptors = nil
			er.Status.ActiveInterceptorName = ptr.To("c.example.com")
		},
		want: []string{"FieldValueInvalid status.activeInterceptorName"},
	},
	"hand-off after the active interceptor completed": {
		old: func(er *coordination.EvictionRequest) {
			withActive("c.example.com")(er)
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(now))
			er.Status.ActiveInterceptorCompleted = true
		},
		new: withActive("b.example.com"),
	},
	"hand-off after the heartbeat deadline passed": {
		old: func(er *coordination.EvictionRequest) {
			withActive("c.example.com")(er)
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(now.Add(-600 * time.Second)))
		},
		new: withActive("b.example.com"),
	},
	"hand-off within the clock skew tolerance of the deadline": {
		old: func(er *coordination.EvictionRequest) {
			withActive("c.example.com")(er)
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(now.Add(-595 * time.Second)))
		},
		new: withActive("b.example.com"),
	},
	"hand-off after the deadline counted from creation": {
		old: func(er *coordination.EvictionRequest) {
			withActive("c.example.com")(er)
			er.CreationTimestamp = metav1.NewTime(now.Add(-601 * time.Second))
		},
		new: withActive("b.example.com"),
	},
	"no hand-off while the creation deadline has not passed": {
		old: func(er *coordination.EvictionRequest) {
			withActive("c.example.com")(er)
			er.CreationTimestamp = metav1.NewTime(now.Add(-500 * time.Second))
		},
		new:  withActive("b.example.com"),
		want: []string{"FieldValueForbidden status.activeInterceptorName"},
	},
	"no hand-off while the active interceptor heartbeats": {
		old: func(er *coordination.EvictionRequest) {
			withActive("c.example.com")(er)
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(now.Add(-time.Minute)))
		},
		new:  withActive("b.example.com"),
		want: []string{"FieldValueForbidden status.activeInterceptorName"},
	},
	"hand-off skipping an interceptor is refused": {
		old: func(er *coordination.EvictionRequest) {
			withActive("c.example.com")(er)
			er.Status.ActiveInterceptorCompleted = true
		},
		new:  withActive("a.example.com"),
		want: []string{"FieldValueInvalid status.activeInterceptorName"},
	},
	"hand-off to a higher index is refused": {
		old: func(er *coordination.EvictionRequest) {
			withActive("b.example.com")(er)
			er.Status.ActiveInterceptorCompleted = true
		},
		new:  withActive("c.example.com"),
		want: []string{"FieldValueInvalid status.activeInterceptorName"},
	},
	"no hand-off below the lowest index": {
		old: func(er *coordination.EvictionRequest) {
			withActive("a.example.com")(er)
			er.Status.ActiveInterceptorCompleted = true
		},
		new:  withActive("unknown.example.com"),
		want: []string{"FieldValueInvalid status.activeInterceptorName"},
	},
	"active interceptor cleared on completion": {
		old: withActive("b.example.com"),
		new: func(er *coordination.EvictionRequest) {
			er.Status.ActiveInterceptorName = nil
			er.Status.Conditions = []metav1.Condition{completeCondition(metav1.ConditionTrue)}
		},
	},
	"active interceptor not cleared before completion": {
		old:  withActive("b.example.com"),
		new:  func(er *coordination.EvictionRequest) { er.Status.ActiveInterceptorName = nil },
		want: []string{"FieldValueForbidden status.activeInterceptorName"},
	},
}

func TestValidateEvictionRequestStatusUpdate(t *testing.T) {
	cases := statusUpdateCases
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oldER := validEvictionRequest()
			if tc.old != nil {
				tc.old(oldER)
			}
			newER := oldER.DeepCopy()
			newER.Status.ActiveInterceptorCompleted = false
			tc.new(newER)
			expectErrors(t, ValidateEvictionRequestStatusUpdate(newER, oldER, now), tc.want...)
		})
	}
}

func TestValidateInterceptorsNamesThePath(t *testing.T) {
	path := field.NewPath("metadata", "annotations").Key("evictionrequest.coordination.k8s.io/interceptors")
	errs := ValidateInterceptors([]coordination.Interceptor{{Name: "ok.example.com"}, {Name: "bad.k8s.io"}}, path)
	expectErrors(t, errs, "FieldValueInvalid metadata.annotations[evictionrequest.coordination.k8s.io/interceptors][1].name")
	if !strings.Contains(errs[0].Detail, "nodemaintenance.k8s.io") {
		t.Errorf("the refusal should list the allowed k8s.io names, got %q", errs[0].Detail)
	}
}
