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

// Package v1alpha1 holds the rules about a v1alpha1 EvictionRequest
// that more than one component reads (is it complete, may it be canceled,
// who requests it, who holds it), in one place for every caller: the
// controller, the drains, the kubectl plugin, the SDK and the surge
// interceptor. Kubernetes keeps its pod rules the same way, in
// k8s.io/kubernetes/pkg/api/v1/pod.
package v1alpha1

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/helper"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// GetCompleteCondition returns the Complete condition of er, whatever its
// status, or nil when it has none.
func GetCompleteCondition(er *v1alpha1.EvictionRequest) *metav1.Condition {
	return apimeta.FindStatusCondition(er.Status.Conditions, string(v1alpha1.EvictionRequestComplete))
}

// IsComplete is true once no interceptor works on er any more: its
// Complete condition is True, which it stays.
func IsComplete(er *v1alpha1.EvictionRequest) bool {
	c := GetCompleteCondition(er)
	return c != nil && c.Status == metav1.ConditionTrue
}

// CompletionReason is the reason of the True Complete condition
// (v1alpha1.CompleteReasonPodDeleted, ...PodTerminated or ...Canceled), or ""
// while er is not complete.
func CompletionReason(er *v1alpha1.EvictionRequest) string {
	if c := GetCompleteCondition(er); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	return ""
}

// CompletionTime is when er became complete (its True Complete
// condition's last transition), and false while it is not.
func CompletionTime(er *v1alpha1.EvictionRequest) (time.Time, bool) {
	if c := GetCompleteCondition(er); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time, true
	}
	return time.Time{}, false
}

// IsCanceled is true when er completed because every requester withdrew.
func IsCanceled(er *v1alpha1.EvictionRequest) bool {
	return CompletionReason(er) == v1alpha1.CompleteReasonCanceled
}

// NewCompleteCondition is the True Complete condition that ends er, as the
// controller writes it.
func NewCompleteCondition(er *v1alpha1.EvictionRequest, reason, message string, now metav1.Time) metav1.Condition {
	return metav1.Condition{
		Type:               string(v1alpha1.EvictionRequestComplete),
		Status:             metav1.ConditionTrue,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: er.Generation,
		LastTransitionTime: now,
	}
}

// CancellationPolicy is er's status.evictionRequestCancellationPolicy,
// Allow when unset.
func CancellationPolicy(er *v1alpha1.EvictionRequest) v1alpha1.EvictionRequestCancellationPolicy {
	return ptr.Deref(er.Status.EvictionRequestCancellationPolicy, v1alpha1.Allow)
}

// CancellationForbidden is true while the active interceptor forbids
// canceling er: its requesters are locked and it cannot be deleted while
// its pod runs.
func CancellationForbidden(er *v1alpha1.EvictionRequest) bool {
	return CancellationPolicy(er) == v1alpha1.Forbid
}

// RequesterIndex is the index of the requester named name in
// spec.requesters, -1 when er does not list it.
func RequesterIndex(er *v1alpha1.EvictionRequest, name string) int {
	for i := range er.Spec.Requesters {
		if er.Spec.Requesters[i].Name == name {
			return i
		}
	}
	return -1
}

// HasRequester is true when spec.requesters lists name.
func HasRequester(er *v1alpha1.EvictionRequest, name string) bool {
	return RequesterIndex(er, name) >= 0
}

// RequesterNames lists the names of spec.requesters, in order.
func RequesterNames(er *v1alpha1.EvictionRequest) []string {
	names := make([]string, 0, len(er.Spec.Requesters))
	for _, r := range er.Spec.Requesters {
		names = append(names, r.Name)
	}
	return names
}

// NeedsRequest is true when the requester named name has to ask for the
// eviction of er's pod (again): there is no request (er is nil), the
// request completed as canceled while the pod still runs, or it does not
// list the requester yet and its requesters are not locked by a Forbid
// policy (the eviction then goes ahead without it).
func NeedsRequest(er *v1alpha1.EvictionRequest, name string) bool {
	switch {
	case er == nil:
		return true
	case IsComplete(er):
		return IsCanceled(er)
	case HasRequester(er, name):
		return false
	}
	return !CancellationForbidden(er)
}

// ActiveInterceptor is the name of er's active interceptor, "" when none.
func ActiveInterceptor(er *v1alpha1.EvictionRequest) string {
	return ptr.Deref(er.Status.ActiveInterceptorName, "")
}

// InterceptorOrder lists the names of er's interceptors in the order they
// take their turns: the highest index first.
func InterceptorOrder(er *v1alpha1.EvictionRequest) []string {
	order := make([]string, 0, len(er.Spec.Interceptors))
	for i := len(er.Spec.Interceptors) - 1; i >= 0; i-- {
		order = append(order, er.Spec.Interceptors[i].Name)
	}
	return order
}

// AtEvictionStep is true once no interceptor of er is left to take a turn
// at now: it declares none, or the active one is the last (index 0) and
// its turn ended, completed or past its heartbeat deadline. The controller
// then evicts the pod through the Eviction API, and the eviction API bridge
// lets evictions of the pod through.
func AtEvictionStep(er *v1alpha1.EvictionRequest, now time.Time) bool {
	order := InterceptorOrder(er)
	if len(order) == 0 {
		return true
	}
	if ActiveInterceptor(er) != order[len(order)-1] {
		return false
	}
	return er.Status.ActiveInterceptorCompleted || !now.Before(HeartbeatDeadline(er))
}

// IsHeldBy is true while the interceptor named name holds er: it is the
// active interceptor, has not completed its turn, and er is not complete.
// Interceptors, and whoever undoes what an interceptor left behind, judge by
// it alike.
func IsHeldBy(er *v1alpha1.EvictionRequest, name string) bool {
	return name != "" && ActiveInterceptor(er) == name && !er.Status.ActiveInterceptorCompleted && !IsComplete(er)
}

// HeartbeatDeadline is when the active interceptor of er is passed over
// unless it heartbeats: spec.heartbeatDeadlineSeconds after its last
// heartbeat, or after er was created.
func HeartbeatDeadline(er *v1alpha1.EvictionRequest) time.Time {
	return helper.HeartbeatDeadline(er.Status.HeartbeatTime, er.CreationTimestamp, er.Spec.HeartbeatDeadlineSeconds)
}

// HeartbeatDeadlineDuration is er's spec.heartbeatDeadlineSeconds as a
// duration, the default when unset.
func HeartbeatDeadlineDuration(er *v1alpha1.EvictionRequest) time.Duration {
	return time.Duration(ptr.Deref(er.Spec.HeartbeatDeadlineSeconds, v1alpha1.DefaultHeartbeatDeadlineSeconds)) * time.Second
}

// PodName is the name of the pod er targets, "" when it targets none.
func PodName(er *v1alpha1.EvictionRequest) string {
	if er.Spec.Target.PodRef == nil {
		return ""
	}
	return er.Spec.Target.PodRef.Name
}

// FailedEvictions counts the API-initiated evictions of er's pod that
// failed.
func FailedEvictions(er *v1alpha1.EvictionRequest) int32 {
	if er.Status.PodEvictionStatus == nil {
		return 0
	}
	return er.Status.PodEvictionStatus.FailedAPIEvictionCounter
}
