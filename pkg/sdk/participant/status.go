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

package participant

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Status is where the eviction of one pod stands, as a participant sees
// it, whichever EvictionRequest API serves it.
type Status struct {
	// Request names the EvictionRequest the participant writes for the pod.
	Request string
	// Exists is true when the pod has that request.
	Exists bool
	// Requested is true when the participant is among its requesters.
	Requested bool
	// OtherRequesters counts the requesters of the pod's eviction besides
	// the participant.
	OtherRequesters int
	// Locked is true while the participant can neither join nor withdraw:
	// the active interceptor forbids canceling the eviction.
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
	// Evicting is true once no interceptor or responder is left to take a
	// turn: the pod is evicted through the Eviction API.
	Evicting bool
	// LastHeartbeat is the active interceptor's last heartbeat, or when it
	// was handed the request; ExpectedFinish its estimate.
	LastHeartbeat, ExpectedFinish *time.Time
	// FailedEvictions counts the evictions the Eviction API refused.
	FailedEvictions int32
	// Message says where the request stands.
	Message string
	// Annotations are those of the participant's request.
	Annotations map[string]string
	// Created is when the server created the request (on our API, whoever
	// created it), and Written the last time it recorded a change the
	// participant made to it (its field manager's managedFields entries);
	// nil when not known, read from a cache that keeps no managedFields.
	// Both are the server's clock, which no writer sets.
	Created time.Time
	Written *time.Time
}

// NeedsRequest is true when the participant has to ask for the pod's
// eviction (again): there is no request, it completed as canceled while
// the pod still runs, or it does not list the participant yet and still
// may.
func (s Status) NeedsRequest() bool {
	switch {
	case !s.Exists:
		return true
	case s.Complete:
		return s.Canceled
	case s.Requested:
		return false
	}
	// Under a Forbid policy the eviction goes ahead without the participant.
	return !s.Locked
}

// Withdrawal is what withdrawing from the eviction of one pod did.
type Withdrawal int

const (
	// NotWithdrawn: there was nothing to withdraw from.
	NotWithdrawn Withdrawal = iota
	// Withdrawn: the participant left the request.
	Withdrawn
	// WithdrawalForbidden: the active interceptor forbids canceling the
	// eviction now; the request is unchanged.
	WithdrawalForbidden
)

// HeldBy is true while the interceptor (or responder) name holds the
// eviction: it is active, has not finished its part, and the eviction is
// not complete.
func (s Status) HeldBy(name string) bool {
	return name != "" && s.ActiveInterceptor == name && !s.InterceptorDone && !s.Complete
}

// lastWritten is the newest time of the managedFields entries of manager
// in entries; nil when it has none.
func lastWritten(entries []metav1.ManagedFieldsEntry, manager string) *time.Time {
	var last *time.Time
	for _, e := range entries {
		if e.Manager == manager && e.Time != nil && (last == nil || e.Time.After(*last)) {
			last = &e.Time.Time
		}
	}
	return last
}
