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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

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
