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
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	internalutil "github.com/evictionrequest/apiserver/pkg/api/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// ControllerStatusChanges names the changes from oldStatus to newStatus
// that KEP-4563 leaves to the eviction request controller, one error per
// field. The KEP gives the active interceptor its heartbeat, its estimate,
// the message, the cancellation policy, conditions of its own and
// activeInterceptorCompleted=true; the controller alone selects and hands
// on the active interceptor (activeInterceptorName, "managed by
// Kubernetes", and the reset of activeInterceptorCompleted that comes with
// a hand-off), counts the failed evictions (podEvictionStatus, "managed by
// Kubernetes") and completes the request (the Complete condition). The
// rules of ValidateEvictionRequestStatusUpdate hold for the controller as
// for everyone; these say who may make a change at all, which the
// admission plugin decides from the caller's rights.
func ControllerStatusChanges(newStatus, oldStatus *coordination.EvictionRequestStatus, fldPath *field.Path) field.ErrorList {
	var changes field.ErrorList
	if internalutil.ActiveInterceptor(newStatus) != internalutil.ActiveInterceptor(oldStatus) {
		changes = append(changes, field.Forbidden(fldPath.Child("activeInterceptorName"),
			"only the eviction request controller selects the active interceptor and hands the request on"))
	}
	if oldStatus.ActiveInterceptorCompleted && !newStatus.ActiveInterceptorCompleted {
		changes = append(changes, field.Forbidden(fldPath.Child("activeInterceptorCompleted"),
			"an interceptor may only set it to true; the eviction request controller resets it when it hands the request on"))
	}
	if !apiequality.Semantic.DeepEqual(newStatus.PodEvictionStatus, oldStatus.PodEvictionStatus) {
		changes = append(changes, field.Forbidden(fldPath.Child("podEvictionStatus"),
			"only the eviction request controller counts the failed evictions of the pod"))
	}
	if !apiequality.Semantic.DeepEqual(completeConditionIn(newStatus), completeConditionIn(oldStatus)) {
		changes = append(changes, field.Forbidden(fldPath.Child("conditions").Key(string(coordination.EvictionRequestComplete)),
			"only the eviction request controller completes a request"))
	}
	return changes
}

// completeConditionIn returns the Complete condition of status, nil when it
// has none.
func completeConditionIn(status *coordination.EvictionRequestStatus) *metav1.Condition {
	for i := range status.Conditions {
		if internalutil.IsCompleteCondition(status.Conditions[i]) {
			return &status.Conditions[i]
		}
	}
	return nil
}
