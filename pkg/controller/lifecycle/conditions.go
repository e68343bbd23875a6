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
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
)

// outcome is where an eviction stands, as the Failed and TargetEvicted
// conditions of an Eviction and its requests say it; both are always set.
type outcome struct {
	failed, evicted             metav1.ConditionStatus
	failedReason, evictedReason lifecyclev1alpha1.EvictionConditionReason
	message                     string
}

// awaiting: no responder evicted the pod yet, and one may.
func awaiting(message string) outcome {
	return outcome{metav1.ConditionFalse, metav1.ConditionFalse,
		lifecyclev1alpha1.EvictionConditionReasonAwaitingEviction, lifecyclev1alpha1.EvictionConditionReasonAwaitingEviction, message}
}

// evicted: the pod is gone or terminal (reason PodDeleted or PodTerminal).
func evicted(reason lifecyclev1alpha1.EvictionConditionReason, message string) outcome {
	return outcome{metav1.ConditionFalse, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonSucceeded, reason, message}
}

// failed: the eviction is over without evicting the pod, for reason
// (EvictionInvalid, CanceledDueToNoRequesters or NoFurtherResponder).
func failed(reason lifecyclev1alpha1.EvictionConditionReason, message string) outcome {
	return outcome{metav1.ConditionTrue, metav1.ConditionFalse, reason, lifecyclev1alpha1.EvictionConditionReasonEvictionFailed, message}
}

// conditions are o's conditions for an object with existing conditions;
// each keeps its transition time while its status is unchanged. As
// kube-controller-manager's controller places them (Kubernetes 1.38), so
// that a hand-over between the two leaves no stale message behind: the
// message is on the condition that decides (Failed when the eviction
// failed, TargetEvicted otherwise), the other's is empty, and no condition
// has an observedGeneration (the object's status has one). The texts still
// differ while an eviction is in progress: ours names the responder it
// waits for, upstream's is empty; each rewrites the other's once.
func (o outcome) conditions(now time.Time, existing []metav1.Condition) []metav1.Condition {
	failedMessage, evictedMessage := "", o.message
	if o.failed == metav1.ConditionTrue {
		failedMessage, evictedMessage = o.message, ""
	}
	return setConditions(now, existing, []metav1.Condition{
		{Type: string(lifecyclev1alpha1.EvictionConditionFailed), Status: o.failed, Reason: string(o.failedReason), Message: failedMessage},
		{Type: string(lifecyclev1alpha1.EvictionConditionTargetEvicted), Status: o.evicted, Reason: string(o.evictedReason), Message: evictedMessage},
	})
}

// setConditions returns want with their transition times: that of the
// existing condition of a type when its status is unchanged, now otherwise.
func setConditions(now time.Time, existing []metav1.Condition, want []metav1.Condition) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(want))
	for _, c := range want {
		c.LastTransitionTime = metav1.NewTime(now)
		if old := apimeta.FindStatusCondition(existing, c.Type); old != nil && old.Status == c.Status && !old.LastTransitionTime.IsZero() {
			c.LastTransitionTime = old.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}

// ownedConditions are the Failed and TargetEvicted conditions among
// conditions, the ones the controller writes.
func ownedConditions(conditions []metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for _, t := range []lifecyclev1alpha1.EvictionConditionType{lifecyclev1alpha1.EvictionConditionFailed, lifecyclev1alpha1.EvictionConditionTargetEvicted} {
		if c := apimeta.FindStatusCondition(conditions, string(t)); c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// conditionsApply turns conditions into apply configurations.
func conditionsApply(conditions []metav1.Condition) []*metav1apply.ConditionApplyConfiguration {
	out := make([]*metav1apply.ConditionApplyConfiguration, 0, len(conditions))
	for _, c := range conditions {
		out = append(out, metav1apply.Condition().WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).
			WithMessage(c.Message).WithLastTransitionTime(c.LastTransitionTime))
	}
	return out
}
