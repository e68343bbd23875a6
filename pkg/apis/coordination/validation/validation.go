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

// Package validation holds the rules of KEP-4563 that hold for every writer of
// an EvictionRequest, whatever its pod looks like. Rules that need the pod or
// the caller live in the admission plugin.
package validation

import (
	"fmt"
	"slices"
	"time"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/helper"
)

const (
	// MaxRequesters is the maximum length of .spec.requesters.
	MaxRequesters = 100
	// MinHeartbeatDeadlineSeconds is the minimum of .spec.heartbeatDeadlineSeconds (10m).
	MinHeartbeatDeadlineSeconds = 600
	// MaxHeartbeatDeadlineSeconds is the maximum of .spec.heartbeatDeadlineSeconds (24h).
	MaxHeartbeatDeadlineSeconds = 86400
	// MaxMessageBytes is the maximum length of .status.message.
	MaxMessageBytes = 32768
	// MaxConditions is the maximum number of .status.conditions besides
	// Complete. The KEP defines Complete, which the controller writes; the
	// room left is for interceptors, and what they write can never keep the
	// controller from adding Complete.
	MaxConditions = 8
	// MaxStatusBytes bounds the text interceptors may add to the status (the
	// types, reasons and messages of the conditions besides Complete, and
	// the active interceptor), so that a status writer can neither make
	// writes fail at etcd's request limit nor push the object over the size
	// at which the apiserver drops managedFields, and with them every
	// requester's ownership. status.message and the Complete condition,
	// which the controller writes too, have bounds of their own.
	MaxStatusBytes = 64 * 1024
	// ClockSkewTolerance is how far clocks of the writers may disagree: a
	// heartbeat may lie this far in the future, and a heartbeat deadline
	// counts as passed this much early.
	ClockSkewTolerance = 10 * time.Second
)

// ValidateEvictionRequest validates a new EvictionRequest.
func ValidateEvictionRequest(er *coordination.EvictionRequest) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := apimachineryvalidation.ValidateObjectMeta(&er.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metaPath)
	if er.GenerateName != "" {
		allErrs = append(allErrs, field.Forbidden(metaPath.Child("generateName"),
			"not supported: an EvictionRequest must be named after the UID of its pod (spec.target.podRef.uid)"))
	}
	if podRef := er.Spec.Target.PodRef; podRef != nil && podRef.UID != "" && er.Name != podRef.UID {
		allErrs = append(allErrs, field.Invalid(metaPath.Child("name"), er.Name, "must be equal to spec.target.podRef.uid"))
	}
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateSpec(&er.Spec, specPath)...)
	if len(er.Spec.Requesters) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("requesters"), "at least one requester is required on creation"))
	}
	return allErrs
}

// ValidateEvictionRequestUpdate validates an update of the main resource. Its
// status is not looked at: the strategy keeps the stored one.
func ValidateEvictionRequestUpdate(newER, oldER *coordination.EvictionRequest) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newER.ObjectMeta, &oldER.ObjectMeta, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateSpec(&newER.Spec, specPath)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newER.Spec.Type, oldER.Spec.Type, specPath.Child("type"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newER.Spec.Target, oldER.Spec.Target, specPath.Child("target"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newER.Spec.Interceptors, oldER.Spec.Interceptors, specPath.Child("interceptors"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newER.Spec.HeartbeatDeadlineSeconds, oldER.Spec.HeartbeatDeadlineSeconds, specPath.Child("heartbeatDeadlineSeconds"))...)
	return allErrs
}

// ValidateEvictionRequestStatusUpdate validates an update of the status
// subresource at the time now: the status on its own, and the moves from the
// old status that the KEP allows.
func ValidateEvictionRequestStatusUpdate(newER, oldER *coordination.EvictionRequest, now time.Time) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newER.ObjectMeta, &oldER.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	allErrs = append(allErrs, validateStatus(&newER.Status, &newER.Spec, statusPath, now)...)
	allErrs = append(allErrs, validateStatusTransition(newER, oldER, statusPath, now)...)
	return allErrs
}

func validateSpec(spec *coordination.EvictionRequestSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch spec.Type {
	case coordination.Soft:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, []coordination.EvictionRequestType{coordination.Soft}))
	}
	allErrs = append(allErrs, validateTarget(&spec.Target, fldPath.Child("target"))...)
	allErrs = append(allErrs, validateRequesters(spec.Requesters, fldPath.Child("requesters"))...)
	allErrs = append(allErrs, ValidateInterceptors(spec.Interceptors, fldPath.Child("interceptors"))...)
	deadlinePath := fldPath.Child("heartbeatDeadlineSeconds")
	switch deadline := spec.HeartbeatDeadlineSeconds; {
	case deadline == nil:
		allErrs = append(allErrs, field.Required(deadlinePath, ""))
	case *deadline < MinHeartbeatDeadlineSeconds || *deadline > MaxHeartbeatDeadlineSeconds:
		allErrs = append(allErrs, field.Invalid(deadlinePath, *deadline,
			validation.InclusiveRangeError(MinHeartbeatDeadlineSeconds, MaxHeartbeatDeadlineSeconds)))
	}
	return allErrs
}

func validateTarget(target *coordination.EvictionTarget, fldPath *field.Path) field.ErrorList {
	podRefPath := fldPath.Child("podRef")
	if target.PodRef == nil {
		return field.ErrorList{field.Required(podRefPath, "a pod is the only supported target")}
	}
	var allErrs field.ErrorList
	if name := target.PodRef.Name; name == "" {
		allErrs = append(allErrs, field.Required(podRefPath.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			allErrs = append(allErrs, field.Invalid(podRefPath.Child("name"), name, msg))
		}
	}
	if target.PodRef.UID == "" {
		allErrs = append(allErrs, field.Required(podRefPath.Child("uid"), ""))
	}
	return allErrs
}

func validateRequesters(requesters []coordination.Requester, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(requesters) > MaxRequesters {
		allErrs = append(allErrs, field.TooMany(fldPath, len(requesters), MaxRequesters))
	}
	seen := make(map[string]bool, len(requesters))
	for i, requester := range requesters {
		namePath := fldPath.Index(i).Child("name")
		allErrs = append(allErrs, validateDNSSubdomainName(requester.Name, namePath)...)
		if seen[requester.Name] {
			allErrs = append(allErrs, field.Duplicate(namePath, requester.Name))
		}
		seen[requester.Name] = true
	}
	return allErrs
}

func validateDNSSubdomainName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}

func validateStatus(status *coordination.EvictionRequestStatus, spec *coordination.EvictionRequestSpec, fldPath *field.Path, now time.Time) field.ErrorList {
	var allErrs field.ErrorList
	if n := len(status.Conditions) - completeConditions(status); n > MaxConditions {
		allErrs = append(allErrs, field.TooMany(fldPath.Child("conditions"), n, MaxConditions))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateConditions(status.Conditions, fldPath.Child("conditions"))...)
	}
	if len(status.Message) > MaxMessageBytes {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("message"), "", MaxMessageBytes))
	}
	if size := statusTextBytes(status); size > MaxStatusBytes {
		allErrs = append(allErrs, field.TooLong(fldPath, "", MaxStatusBytes))
	}
	if hb := status.HeartbeatTime; hb != nil && hb.After(now.Add(ClockSkewTolerance)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("heartbeatTime"), hb.UTC().Format(time.RFC3339),
			fmt.Sprintf("must not be more than %s in the future", ClockSkewTolerance)))
	}
	policyPath := fldPath.Child("evictionRequestCancellationPolicy")
	switch policy := status.EvictionRequestCancellationPolicy; {
	case policy == nil:
		allErrs = append(allErrs, field.Required(policyPath, ""))
	case *policy != coordination.Allow && *policy != coordination.Forbid:
		allErrs = append(allErrs, field.NotSupported(policyPath, *policy,
			[]coordination.EvictionRequestCancellationPolicy{coordination.Allow, coordination.Forbid}))
	}
	if pes := status.PodEvictionStatus; pes != nil {
		pesPath := fldPath.Child("podEvictionStatus")
		if spec.Target.PodRef == nil {
			allErrs = append(allErrs, field.Forbidden(pesPath, "may only be set when spec.target.podRef is set"))
		}
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(pes.FailedAPIEvictionCounter), pesPath.Child("failedAPIEvictionCounter"))...)
	}
	return allErrs
}

// statusTextBytes is the length of the text interceptors may add to a
// status, which is what can make it large: everything else in it has a
// fixed size or a bound of its own.
func statusTextBytes(status *coordination.EvictionRequestStatus) int {
	n := len(helper.ActiveInterceptor(status))
	for _, c := range status.Conditions {
		if !helper.IsCompleteCondition(c) {
			n += len(c.Type) + len(c.Reason) + len(c.Message)
		}
	}
	return n
}

// completeConditions counts the Complete conditions of a status: one, or
// none; validation refuses a second.
func completeConditions(status *coordination.EvictionRequestStatus) int {
	n := 0
	for _, c := range status.Conditions {
		if helper.IsCompleteCondition(c) {
			n++
		}
	}
	return n
}

func validateStatusTransition(newER, oldER *coordination.EvictionRequest, fldPath *field.Path, now time.Time) field.ErrorList {
	var allErrs field.ErrorList
	newStatus, oldStatus := &newER.Status, &oldER.Status

	if newCount, oldCount := failedAPIEvictions(newStatus), failedAPIEvictions(oldStatus); newCount < oldCount {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("podEvictionStatus", "failedAPIEvictionCounter"), newCount,
			fmt.Sprintf("may not decrease (was %d)", oldCount)))
	}
	newComplete := helper.IsComplete(newStatus)
	if helper.IsComplete(oldStatus) && !newComplete {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("conditions"),
			fmt.Sprintf("the %s condition may not change once it is True", coordination.EvictionRequestComplete)))
	}
	allErrs = append(allErrs, validateActiveInterceptorMove(newER, oldER, newComplete, fldPath.Child("activeInterceptorName"), now)...)
	return allErrs
}

// validateActiveInterceptorMove allows .status.activeInterceptorName to move
// only the way the eviction request controller moves it: from unset to the
// highest index, one index down once the active interceptor completed or
// missed its heartbeat deadline, and to unset on completion.
func validateActiveInterceptorMove(newER, oldER *coordination.EvictionRequest, newComplete bool, fldPath *field.Path, now time.Time) field.ErrorList {
	newName, oldName := helper.ActiveInterceptor(&newER.Status), helper.ActiveInterceptor(&oldER.Status)
	if newName == oldName {
		return nil
	}
	interceptors := newER.Spec.Interceptors
	switch {
	case newName == "":
		if !newComplete {
			return field.ErrorList{field.Forbidden(fldPath,
				fmt.Sprintf("may only be cleared once the %s condition is True", coordination.EvictionRequestComplete))}
		}
		return nil
	case oldName == "":
		if len(interceptors) == 0 {
			return field.ErrorList{field.Invalid(fldPath, newName, "spec.interceptors is empty, no interceptor can be active")}
		}
		if first := interceptors[len(interceptors)-1].Name; newName != first {
			return field.ErrorList{field.Invalid(fldPath, newName,
				fmt.Sprintf("the first active interceptor must be %q, the one with the highest index in spec.interceptors", first))}
		}
		return nil
	}
	oldIndex := slices.IndexFunc(interceptors, func(i coordination.Interceptor) bool { return i.Name == oldName })
	if oldIndex <= 0 || interceptors[oldIndex-1].Name != newName {
		next := "none, the active interceptor has the lowest index"
		if oldIndex > 0 {
			next = fmt.Sprintf("%q", interceptors[oldIndex-1].Name)
		}
		return field.ErrorList{field.Invalid(fldPath, newName,
			fmt.Sprintf("may only move to the next interceptor at a lower index in spec.interceptors (%s)", next))}
	}
	deadline := helper.HeartbeatDeadline(oldER.Status.HeartbeatTime, oldER.CreationTimestamp, oldER.Spec.HeartbeatDeadlineSeconds)
	if !oldER.Status.ActiveInterceptorCompleted && now.Add(ClockSkewTolerance).Before(deadline) {
		return field.ErrorList{field.Forbidden(fldPath, fmt.Sprintf(
			"may only move from %q once it set status.activeInterceptorCompleted=true or missed its heartbeat deadline", oldName))}
	}
	return nil
}

func failedAPIEvictions(status *coordination.EvictionRequestStatus) int32 {
	if status.PodEvictionStatus == nil {
		return 0
	}
	return status.PodEvictionStatus.FailedAPIEvictionCounter
}
