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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EvictionRequest defines an eviction request
type EvictionRequest struct {
	metav1.TypeMeta `json:",inline"`

	// Object's metadata.
	// .metadata.name should match the .metadata.uid of the pod being evicted.
	// .metadata.generateName is not supported.
	// The labels of the eviction request object will be merged with pod's .metadata.labels. The
	// labels of the pod have a preference.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec defines the eviction request specification.
	// https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status
	// This field is required.
	// +required
	Spec EvictionRequestSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`

	// Status represents the most recently observed status of the eviction request.
	// Populated by the current interceptor and eviction request controller.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status
	// +optional
	Status EvictionRequestStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// EvictionRequestSpec is a specification of an EvictionRequest.
type EvictionRequestSpec struct {
	// Valid types are Soft.
	// The default value is Soft.
	//
	// Soft type attempts to evict the target gracefully.
	// Each active interceptor is given unlimited time to resolve the eviction request, provided
	// that it responds periodically (see .spec.heartbeatDeadlineSeconds). This means there is no
	// deadline for a single interceptor, or for the eviction request as a whole.
	//
	// For pod targets, the eviction request controller will call the /evict API endpoint when
	// there are no more interceptors. This call may not succeed due to PodDisruptionBudgets, which
	// may block the pod termination (see .status.podEvictionStatus.failedAPIEvictionCounter). A
	// successful soft eviction request should ideally result in the pod being terminated gracefully.
	//
	// This field is immutable.
	// +required
	Type EvictionRequestType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=EvictionRequestType"`

	// Target contains a reference to an object (e.g. a pod) that should be evicted.
	// This field is immutable.
	// +required
	Target EvictionTarget `json:"target" protobuf:"bytes,2,opt,name=target"`

	// At least one requester is required when creating an eviction request.
	// A requester is also required for the eviction request to be processed.
	// Empty list indicates that the eviction request should be canceled.
	//
	// This field cannot be modified if the .status.evictionRequestCancellationPolicy field is
	// set to `Forbid`.
	// It also cannot be modified once the eviction request has been completed (Complete condition is
	// True).
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=name
	Requesters []Requester `json:"requesters,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,3,rep,name=requesters"`

	// Interceptors reference interceptors that respond to this eviction request.
	// Interceptors should observe and communicate through the EvictionRequest API to help with
	// the graceful eviction of a target (e.g. termination of a pod). The interceptors are chosen in
	// reverse order of the list. In other words, the interceptor with the highest index runs first.
	//
	// This field must not be set upon creation. Instead, it is resolved when the EvictionRequest
	// object is created upon admission. The field is populated from the Pod's
	// evictionrequest.coordination.k8s.io/interceptors annotation (the stand-in for the Pod's
	// .spec.evictionInterceptors).
	//
	// The maximum length of the interceptors list is 100.
	// This field is immutable.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=name
	Interceptors []Interceptor `json:"interceptors,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,4,rep,name=interceptors"`

	// HeartbeatDeadlineSeconds is a maximum amount of time that an interceptor should take to
	// periodically report on an eviction progress by updating the .status.heartbeatTime.
	// If the .status.heartbeatTime is not updated within the duration of
	// HeartbeatDeadlineSeconds, the eviction request is passed over to the next interceptor at a
	// lower index. If there is none and if the target is a pod, it is evicted using the Eviction
	// API.
	//
	// The minimum value is 600 (10m) and the maximum value is 86400 (24h).
	// The default value is 1800 (30m).
	// This field is required and immutable.
	// +required
	HeartbeatDeadlineSeconds *int32 `json:"heartbeatDeadlineSeconds" protobuf:"varint,5,opt,name=heartbeatDeadlineSeconds"`
}

// EvictionRequestType is the type of an eviction request.
// +enum
type EvictionRequestType string

const (
	// Soft type attempts to evict the target gracefully.
	// Each active interceptor is given unlimited time to resolve the eviction request, provided
	// that it responds periodically (see .spec.heartbeatDeadlineSeconds). This means there is no
	// deadline for a single interceptor, or for the eviction request as a whole.
	//
	// For pod targets, the eviction request controller will call the eviction API endpoint when
	// there are no more interceptors. This call may not succeed due to PodDisruptionBudgets, which
	// may block the pod termination (see .status.podEvictionStatus.failedAPIEvictionCounter). A
	// successful soft eviction request should ideally result in the pod being terminated gracefully.
	Soft EvictionRequestType = "Soft"
)

// EvictionTarget contains a reference to an object that should be evicted.
// Only one target (PodRef) is required.
type EvictionTarget struct {
	// PodRef references a pod that is subject to eviction/termination.
	// Only one target (PodRef) is required.
	// This field is immutable.
	// +optional
	PodRef *LocalPodReference `json:"podRef,omitempty" protobuf:"bytes,1,opt,name=podRef"`
}

// LocalPodReference contains enough information to locate the referenced pod inside the same namespace.
type LocalPodReference struct {
	// Name of the pod.
	// This field is required.
	// +required
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// UID of the pod.
	// This field is required.
	// +required
	UID string `json:"uid" protobuf:"bytes,2,opt,name=uid"`
}

// Requester allows you to identify the entity, that requested the eviction of the target.
type Requester struct {
	// Name must be RFC-1123 DNS subdomain identifying the requester (e.g.
	// foo.example.com).
	// This field must be unique for each requester.
	// This field is required.
	// +required
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// Interceptor allows you to identify the interceptor responding to the EvictionRequest.
// Interceptors should observe and communicate through the EvictionRequest API to help with
// the graceful eviction of a target (e.g. termination of a pod).
type Interceptor struct {
	// Name must be RFC-1123 DNS subdomain identifying the interceptor (e.g.
	// bar.example.com).
	// This field must be unique for each interceptor.
	// This field is required.
	// +required
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// EvictionRequestStatus represents the last observed status of the eviction request.
type EvictionRequestStatus struct {
	// Conditions can be used by interceptors to share additional information about the eviction
	// request.
	// See EvictionRequestConditionType for eviction request specific conditions.
	// +optional
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`

	// Message is a human readable message indicating details about the eviction request.
	// This may be an empty string.
	// The maximum length is 32768 bytes.
	// +required
	Message string `json:"message" protobuf:"bytes,2,opt,name=message"`

	// Interceptors of the ActiveInterceptorName can adopt this eviction request by updating the
	// HeartbeatTime or orphan/complete it by setting ActiveInterceptorCompleted to true.
	// This field is managed by Kubernetes. It is cleared once the eviction request has completed.
	// +optional
	ActiveInterceptorName *string `json:"activeInterceptorName,omitempty" protobuf:"bytes,3,opt,name=activeInterceptorName"`

	// ActiveInterceptorCompleted should be set to true when the interceptor of the
	// ActiveInterceptorName has either fully or partially completed, which may have resulted in
	// target eviction (e.g. pod termination).
	// This field can also be set to true if no interceptor is available.
	// If this field is true and no additional interceptor is available:
	// - If the target is a pod that is still running, it will be evicted using the Eviction API.
	// +optional
	ActiveInterceptorCompleted bool `json:"activeInterceptorCompleted,omitempty" protobuf:"varint,4,opt,name=activeInterceptorCompleted"`

	// ExpectedInterceptorFinishTime is the time at which the eviction process step is expected to
	// end for the active interceptor.
	// May be empty if no estimate can be made.
	// +optional
	ExpectedInterceptorFinishTime *metav1.Time `json:"expectedInterceptorFinishTime,omitempty" protobuf:"bytes,5,opt,name=expectedInterceptorFinishTime"`

	// HeartbeatTime is the time at which the eviction process was reported to be in progress by
	// the interceptor.
	// Cannot be set to the future time (after taking time skew of up to 10 seconds into account).
	// +optional
	HeartbeatTime *metav1.Time `json:"heartbeatTime,omitempty" protobuf:"bytes,6,opt,name=heartbeatTime"`

	// EvictionRequestCancellationPolicy should be set to Forbid by the interceptor if it is not possible
	// to cancel (delete) the eviction request.
	// When this value is Forbid, DELETE requests of this EvictionRequest object will not be accepted
	// while the target (e.g. a pod) exists.
	// This field is not reset by the eviction request controller when selecting an interceptor.
	// Changes to this field should always be reconciled by the active interceptor.
	//
	// Valid policies are Allow and Forbid.
	// The default value is Allow.
	//
	// Allow policy allows cancellation of this eviction request.
	// The EvictionRequest can be deleted before the target is fully evicted (e.g. before the pod is
	// fully terminated).
	//
	// Forbid policy forbids cancellation of this eviction request.
	// The EvictionRequest can't be deleted until the target is fully evicted (e.g. until the pod is
	// fully terminated).
	//
	// +optional
	EvictionRequestCancellationPolicy *EvictionRequestCancellationPolicy `json:"evictionRequestCancellationPolicy,omitempty" protobuf:"bytes,7,opt,name=evictionRequestCancellationPolicy,casttype=EvictionRequestCancellationPolicy"`

	// Pod-specific status that is populated during pod eviction.
	// This field can only be set when .spec.target.podRef is set.
	// This field is managed by Kubernetes.
	// +optional
	PodEvictionStatus *PodEvictionStatus `json:"podEvictionStatus,omitempty" protobuf:"bytes,8,opt,name=podEvictionStatus"`
}

// EvictionRequestConditionType is the type of a condition of an eviction request.
type EvictionRequestConditionType string

// These are built-in conditions of an eviction request.
const (
	// EvictionRequestComplete means that the eviction request is no longer being processed by any
	// eviction interceptor. This may be either because the pod has been terminated or deleted, or
	// because the eviction request has been canceled.
	EvictionRequestComplete EvictionRequestConditionType = "Complete"
)

// Reasons of the Complete condition, set by the eviction request controller.
// Requesters read them to learn how an eviction request ended.
const (
	// CompleteReasonPodDeleted: the pod was deleted, or replaced by a pod of
	// the same name and another UID.
	CompleteReasonPodDeleted = "PodDeleted"
	// CompleteReasonPodTerminated: the pod reached phase Succeeded or Failed,
	// for example after a graceful node shutdown.
	CompleteReasonPodTerminated = "PodTerminated"
	// CompleteReasonCanceled: every requester withdrew while cancellation
	// was allowed.
	CompleteReasonCanceled = "Canceled"
)

// EvictionRequestCancellationPolicy says whether an eviction request can be canceled.
// +enum
type EvictionRequestCancellationPolicy string

const (
	// Allow policy allows cancellation of this eviction request.
	// The EvictionRequest can be deleted before the target is fully evicted (e.g. before the pod is
	// fully terminated).
	Allow EvictionRequestCancellationPolicy = "Allow"
	// Forbid policy forbids cancellation of this eviction request.
	// The EvictionRequest can't be deleted until the target is fully evicted (e.g. until the pod is
	// fully terminated).
	Forbid EvictionRequestCancellationPolicy = "Forbid"
)

// PodEvictionStatus is the pod-specific status that is populated during pod eviction.
type PodEvictionStatus struct {
	// The number of unsuccessful attempts to evict the referenced pod via the API-initiated eviction,
	// e.g. due to a PodDisruptionBudget.
	// This is set by the eviction controller after all the interceptors have completed.
	// The minimum value is 0, and subsequent updates can only increase it.
	// +required
	FailedAPIEvictionCounter int32 `json:"failedAPIEvictionCounter" protobuf:"varint,1,opt,name=failedAPIEvictionCounter"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EvictionRequestList is a list of EvictionRequest objects.
type EvictionRequestList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Items is a list of EvictionRequest objects.
	Items []EvictionRequest `json:"items" protobuf:"bytes,2,rep,name=items"`
}
