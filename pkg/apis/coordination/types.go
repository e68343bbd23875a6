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

package coordination

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EvictionRequest asks for the eviction of one target (a pod) and records the
// progress of the interceptors that take part in it.
type EvictionRequest struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is what the requesters want; see the versioned type for the contract.
	Spec EvictionRequestSpec
	// Status is reported by the active interceptor and the eviction request controller.
	Status EvictionRequestStatus
}

// EvictionRequestSpec is a specification of an EvictionRequest.
type EvictionRequestSpec struct {
	// Type of the eviction request; Soft is the only type.
	Type EvictionRequestType
	// Target references the object to evict.
	Target EvictionTarget
	// Requesters asking for the eviction; empty means canceled.
	Requesters []Requester
	// Interceptors resolved from the pod at admission, the highest index runs first.
	Interceptors []Interceptor
	// HeartbeatDeadlineSeconds is how long an interceptor may go without a heartbeat.
	HeartbeatDeadlineSeconds *int32
}

// EvictionRequestType is the type of an eviction request.
type EvictionRequestType string

const (
	// Soft type attempts to evict the target gracefully.
	Soft EvictionRequestType = "Soft"
)

// EvictionTarget contains a reference to an object that should be evicted.
type EvictionTarget struct {
	// PodRef references a pod that is subject to eviction/termination.
	PodRef *LocalPodReference
}

// LocalPodReference locates a pod in the namespace of the eviction request.
type LocalPodReference struct {
	// Name of the pod.
	Name string
	// UID of the pod.
	UID string
}

// Requester identifies an entity that requested the eviction.
type Requester struct {
	// Name is a DNS-1123 subdomain identifying the requester.
	Name string
}

// Interceptor identifies an interceptor responding to the eviction request.
type Interceptor struct {
	// Name is a DNS-1123 subdomain identifying the interceptor.
	Name string
}

// EvictionRequestStatus represents the last observed status of the eviction request.
type EvictionRequestStatus struct {
	// Conditions share additional information about the eviction request.
	Conditions []metav1.Condition
	// Message is a human readable message about the eviction request.
	Message string
	// ActiveInterceptorName is the interceptor that currently owns the eviction.
	ActiveInterceptorName *string
	// ActiveInterceptorCompleted is set by the active interceptor when it is done.
	ActiveInterceptorCompleted bool
	// ExpectedInterceptorFinishTime is the active interceptor's estimate.
	ExpectedInterceptorFinishTime *metav1.Time
	// HeartbeatTime is the last time the active interceptor reported progress.
	HeartbeatTime *metav1.Time
	// EvictionRequestCancellationPolicy says whether the request may be canceled.
	EvictionRequestCancellationPolicy *EvictionRequestCancellationPolicy
	// PodEvictionStatus is the pod-specific status of API-initiated evictions.
	PodEvictionStatus *PodEvictionStatus
}

// EvictionRequestConditionType is the type of a condition of an eviction request.
type EvictionRequestConditionType string

const (
	// EvictionRequestComplete means that the eviction request is no longer
	// being processed by any interceptor: the pod terminated or was deleted,
	// or the request was canceled.
	EvictionRequestComplete EvictionRequestConditionType = "Complete"
)

// EvictionRequestCancellationPolicy says whether an eviction request can be canceled.
type EvictionRequestCancellationPolicy string

const (
	// Allow policy allows cancellation of this eviction request.
	Allow EvictionRequestCancellationPolicy = "Allow"
	// Forbid policy forbids cancellation of this eviction request.
	Forbid EvictionRequestCancellationPolicy = "Forbid"
)

// PodEvictionStatus is the pod-specific status populated during pod eviction.
type PodEvictionStatus struct {
	// FailedAPIEvictionCounter counts unsuccessful API-initiated evictions.
	FailedAPIEvictionCounter int32
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EvictionRequestList is a list of EvictionRequest objects.
type EvictionRequestList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// Items is the list of EvictionRequests.
	Items []EvictionRequest
}
