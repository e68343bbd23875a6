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

// Package helper holds the rules about the internal EvictionRequest that
// validation and the admission plugin share (as Kubernetes'
// pkg/apis/<group>/helper); the same rules of the v1alpha1 type, for
// clients, are in pkg/api/coordination/v1alpha1.
package helper

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// IsCompleteCondition is true for a condition of the Complete type,
// whatever its status.
func IsCompleteCondition(c metav1.Condition) bool {
	return c.Type == string(coordination.EvictionRequestComplete)
}

// IsComplete is true once the Complete condition of status is True.
func IsComplete(status *coordination.EvictionRequestStatus) bool {
	return apimeta.IsStatusConditionTrue(status.Conditions, string(coordination.EvictionRequestComplete))
}

// CancellationForbidden is true while the cancellation policy of status
// is Forbid.
func CancellationForbidden(status *coordination.EvictionRequestStatus) bool {
	return status.EvictionRequestCancellationPolicy != nil && *status.EvictionRequestCancellationPolicy == coordination.Forbid
}

// ActiveInterceptor is the name of the active interceptor of status, ""
// when none.
func ActiveInterceptor(status *coordination.EvictionRequestStatus) string {
	if status.ActiveInterceptorName == nil {
		return ""
	}
	return *status.ActiveInterceptorName
}

// HeartbeatDeadline returns when the active interceptor is passed over:
// heartbeatDeadlineSeconds (coordination.DefaultHeartbeatDeadlineSeconds
// when unset) after its last heartbeat, or after the creation of the request
// when no interceptor has sent one yet. The arguments are the plain fields so
// that the internal and the versioned types share this one rule.
func HeartbeatDeadline(heartbeatTime *metav1.Time, creationTimestamp metav1.Time, heartbeatDeadlineSeconds *int32) time.Time {
	seconds := coordination.DefaultHeartbeatDeadlineSeconds
	if heartbeatDeadlineSeconds != nil {
		seconds = *heartbeatDeadlineSeconds
	}
	since := creationTimestamp
	if heartbeatTime != nil {
		since = *heartbeatTime
	}
	return since.Add(time.Duration(seconds) * time.Second)
}
