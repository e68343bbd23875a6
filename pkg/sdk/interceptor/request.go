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

package interceptor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// Handler does the interceptor's work on one EvictionRequest. Its context
// ends when the interceptor loses the request or stops. It must be
// idempotent: after a restart or a failure it runs again for a request it
// already worked on. A Handler that waits for something returns Requeue:
// it observes, decides, acts and returns, and the SDK calls it again
// (heartbeating in between), as a controller-runtime reconciler asks with
// reconcile.Result{RequeueAfter}.
type Handler func(ctx context.Context, req *Request) (Result, error)

// Outcome says how a Handler ended its turn.
type Outcome int

const (
	// Completed: the interceptor did its part without terminating the pod;
	// the request passes to the next interceptor, or to the Eviction API.
	Completed Outcome = iota + 1
	// Declined: the interceptor does not handle this pod; the request
	// passes on at once.
	Declined
	// PodTerminated: the Handler deleted, evicted or terminated the pod; the
	// interceptor keeps the request by heartbeating until the pod is gone
	// and the request completes. On lifecycle.k8s.io it completes its
	// turn at once, as a responder whose completion evicted the pod.
	PodTerminated
)

func (o Outcome) String() string {
	switch o {
	case Completed:
		return "Completed"
	case Declined:
		return "Declined"
	case PodTerminated:
		return "PodTerminated"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is what a Handler returns: its outcome and the status.message
// written with it, or, with no outcome, when to call the Handler again.
type Result struct {
	Outcome Outcome
	Message string
	// RequeueAfter, with no Outcome, keeps the request (the SDK heartbeats)
	// and calls the Handler again after this long.
	RequeueAfter time.Duration
}

// Requeue returns the Result that keeps the request and calls the Handler
// again after d.
func Requeue(d time.Duration) Result {
	return Result{RequeueAfter: d}
}

// Complete returns a Completed result.
func Complete(format string, args ...any) Result {
	return Result{Outcome: Completed, Message: fmt.Sprintf(format, args...)}
}

// Decline returns a Declined result; the message says why the interceptor
// does not handle the pod.
func Decline(format string, args ...any) Result {
	return Result{Outcome: Declined, Message: fmt.Sprintf(format, args...)}
}

// Terminated returns a PodTerminated result.
func Terminated(format string, args ...any) Result {
	return Result{Outcome: PodTerminated, Message: fmt.Sprintf(format, args...)}
}

// ErrLost is returned by Request.Report once the interceptor no longer
// holds the request.
var ErrLost = errors.New("the interceptor no longer holds the EvictionRequest")

// Progress is what an interceptor tells about its work on a request; every
// heartbeat carries the latest.
type Progress struct {
	// Message is written to status.message; empty keeps the last one.
	Message string
	// ExpectedFinishTime is written to
	// status.expectedInterceptorFinishTime (the responder's
	// expectedCompletionTime on lifecycle.k8s.io); nil clears it.
	ExpectedFinishTime *time.Time
	// CancellationPolicy is written to
	// status.evictionRequestCancellationPolicy: Forbid while the
	// interceptor is in a step that must not be canceled, Allow otherwise;
	// empty keeps what the request has. lifecycle.k8s.io has no such
	// policy: there it is not written.
	CancellationPolicy v1alpha1.EvictionRequestCancellationPolicy
}

// Request is the eviction of one pod the interceptor holds, as a Handler
// sees it: an EvictionRequest of coordination.k8s.io, or an Eviction of
// lifecycle.k8s.io where the interceptor is a responder.
type Request struct {
	// EvictionRequest, on coordination.k8s.io, is a copy of the request as
	// the interceptor found it, before its first heartbeat: a Handler
	// resumed after a restart sees the message and policy of its previous
	// run.
	EvictionRequest *v1alpha1.EvictionRequest
	// Eviction, on lifecycle.k8s.io, is a copy of the pod's Eviction as
	// the interceptor found it, before its first heartbeat.
	Eviction *lifecyclev1alpha1.Eviction
	// responder is the interceptor's name on lifecycle.k8s.io.
	responder string
	reporter  Reporter
}

// Reporter writes a Handler's progress to its request: the SDK's own, or,
// in a unit test of a Handler, the test's (see NewRequest).
type Reporter interface {
	Report(ctx context.Context, progress Progress) error
}

// NewRequest returns the Request a Handler sees for er, whose progress
// goes to r. The SDK makes its own; tests of a Handler make theirs.
func NewRequest(er *v1alpha1.EvictionRequest, r Reporter) *Request {
	return &Request{EvictionRequest: er, reporter: r}
}

// NewLifecycleRequest returns the Request the responder named responder
// sees for ev, whose progress goes to r.
func NewLifecycleRequest(ev *lifecyclev1alpha1.Eviction, responder string, r Reporter) *Request {
	return &Request{Eviction: ev, responder: responder, reporter: r}
}

// Pod is the namespace and name of the pod to evict.
func (r *Request) Pod() types.NamespacedName {
	if r.Eviction != nil {
		return types.NamespacedName{Namespace: r.Eviction.Namespace, Name: r.Eviction.Spec.Target.Pod.Name}
	}
	return types.NamespacedName{Namespace: r.EvictionRequest.Namespace, Name: r.EvictionRequest.Spec.Target.PodRef.Name}
}

// PodUID is the UID of the pod to evict.
func (r *Request) PodUID() types.UID {
	if r.Eviction != nil {
		return r.Eviction.Spec.Target.Pod.UID
	}
	return types.UID(r.EvictionRequest.Spec.Target.PodRef.UID)
}

// Message is the message the request showed when the interceptor found
// it: on lifecycle.k8s.io the interceptor's own entry's, so that a Handler
// resumed after a restart can read where its previous run stood.
func (r *Request) Message() string {
	if r.Eviction != nil {
		if status := lifecycleutil.ResponderStatus(r.Eviction, r.responder); status != nil {
			return ptr.Deref(status.Message, "")
		}
		return ""
	}
	return r.EvictionRequest.Status.Message
}

// Report replaces the interceptor's progress and, when it changed, writes
// it with a heartbeat now; later heartbeats repeat it. A Handler that is
// called again may report the same progress every time: what did not
// change is not written again. It returns ErrLost once the interceptor no
// longer holds the request.
func (r *Request) Report(ctx context.Context, progress Progress) error {
	return r.reporter.Report(ctx, progress)
}

// progressState is the progress of a hold, shared by the Handler's Report
// calls and the heartbeat loop.
type progressState struct {
	mu       sync.Mutex
	progress Progress
}

// set replaces the progress and reports whether it changed.
func (p *progressState) set(progress Progress) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if progress.Message == "" {
		progress.Message = p.progress.Message
	}
	if progress.CancellationPolicy == "" {
		progress.CancellationPolicy = p.progress.CancellationPolicy
	}
	changed := p.progress.Message != progress.Message || p.progress.CancellationPolicy != progress.CancellationPolicy ||
		!sameTime(p.progress.ExpectedFinishTime, progress.ExpectedFinishTime)
	p.progress = progress
	return changed
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func (p *progressState) get() Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.progress
}
