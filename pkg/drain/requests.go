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

package drain

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RequestStatus is what a drain reads of the eviction request of one pod,
// whichever EvictionRequest API serves it.
type RequestStatus struct {
	// Exists is true when the pod has a request.
	Exists bool
	// Requested is true when the drain's requester is among its requesters.
	Requested bool
	// Locked is true while the drain's requester can neither join nor
	// withdraw: the active interceptor forbids canceling the eviction.
	Locked bool
	// Complete is true once no one works on the request any more, Canceled
	// when it ended because every requester withdrew.
	Complete, Canceled bool
	// ActiveInterceptor is the interceptor in charge, if any, and
	// InterceptorDone is true once it finished its part.
	ActiveInterceptor string
	InterceptorDone   bool
	// AwaitingInterceptor is true while interceptors are declared but none
	// has been made active yet.
	AwaitingInterceptor bool
	// LastHeartbeat is the active interceptor's last heartbeat, or when it
	// was handed the request; ExpectedFinish its estimate.
	LastHeartbeat, ExpectedFinish *time.Time
	// FailedEvictions counts the evictions the Eviction API refused.
	FailedEvictions int32
	// Message says where the request stands.
	Message string
}

// NeedsRequest is true when the drain has to ask for the pod's eviction
// (again): there is no request, it completed as canceled while the pod
// still runs, or it does not list the drain yet and still may.
func (s RequestStatus) NeedsRequest() bool {
	switch {
	case !s.Exists:
		return true
	case s.Complete:
		return s.Canceled
	case s.Requested:
		return false
	}
	// Under a Forbid policy the eviction goes ahead without the drain.
	return !s.Locked
}

// Withdrawal is what withdrawing from one request did.
type Withdrawal int

const (
	// NotWithdrawn: there was nothing to withdraw from.
	NotWithdrawn Withdrawal = iota
	// Withdrawn: the drain's requester left the request.
	Withdrawn
	// WithdrawalForbidden: the active interceptor forbids canceling the
	// eviction now; the request is unchanged.
	WithdrawalForbidden
)

// Requests is one EvictionRequest API as a drain speaks it, under one
// requester name.
type Requests interface {
	// Requester is the name the drain requests evictions as.
	Requester() string
	// Status reads the request of the pod with uid in namespace from a cache.
	Status(namespace string, uid types.UID) RequestStatus
	// Request asks for the eviction of pod and returns the request as
	// written.
	Request(ctx context.Context, pod *corev1.Pod) (RequestStatus, error)
	// Withdraw withdraws the drain's requester from the request of the pod
	// with uid in namespace.
	Withdraw(ctx context.Context, namespace string, uid types.UID) (Withdrawal, error)
}
