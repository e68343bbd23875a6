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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// BenchmarkValidateEvictionRequest validates the create of a request with
// the largest lists the API allows: 100 requesters and 100 interceptors.
func BenchmarkValidateEvictionRequest(b *testing.B) {
	er := validEvictionRequest()
	er.Spec.Requesters = requesters(100)
	er.Spec.Interceptors = interceptors(100)
	b.ReportAllocs()
	for b.Loop() {
		if errs := ValidateEvictionRequest(er); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkValidateEvictionRequestStatusUpdate validates the heartbeat an
// active interceptor writes, the most frequent write of the API.
func BenchmarkValidateEvictionRequestStatusUpdate(b *testing.B) {
	oldER := validEvictionRequest()
	oldER.Spec.Interceptors = interceptors(100)
	oldER.Status.ActiveInterceptorName = ptr.To(oldER.Spec.Interceptors[99].Name)
	oldER.Status.HeartbeatTime = ptr.To(metav1.NewTime(now.Add(-time.Minute)))
	newER := oldER.DeepCopy()
	newER.Status.HeartbeatTime = ptr.To(metav1.NewTime(now))
	newER.Status.Message = "migrating data: 42%"
	newER.Status.Conditions = []metav1.Condition{{Type: "Migrating", Status: metav1.ConditionTrue, Reason: "InProgress", LastTransitionTime: metav1.NewTime(now)}}
	b.ReportAllocs()
	for b.Loop() {
		if errs := ValidateEvictionRequestStatusUpdate(newER, oldER, now); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}
