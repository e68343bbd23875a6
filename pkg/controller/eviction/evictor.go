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

package eviction

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
)

// PodAnnotationsRead are the pod annotations the evictor reads of the pods
// of its cache (whether the Eviction API is used for one), which the pod
// cache of every binary that runs it keeps.
var PodAnnotationsRead = podutil.EvictabilityAnnotations

// Reasons of the events the controllers of both APIs record.
const (
	// EventEvicted: the Eviction API accepted the eviction of the pod.
	EventEvicted = "Evicted"
	// EventEvictionFailed: the Eviction API refused or failed; the
	// eviction is retried with backoff.
	EventEvictionFailed = "EvictionFailed"
	// EventEvictionNotSupported: the pod is a DaemonSet or mirror pod,
	// which the Eviction API is not used for.
	EventEvictionNotSupported = "EvictionNotSupported"
	// EventCompleted: the eviction is over because its pod is gone or
	// terminal.
	EventCompleted = "Completed"
	// EventCanceled: the eviction is over because every requester withdrew.
	EventCanceled = "Canceled"
)

// Result is how an attempt to evict a pod ended.
type Result int

const (
	// Evicted: the Eviction API granted the eviction.
	Evicted Result = iota + 1
	// Refused: the Eviction API refused (a PodDisruptionBudget) or failed;
	// the attempt is retried after RetryIn.
	Refused
	// Skipped: the pod is one the Eviction API is not used for (Kind).
	Skipped
	// Terminating: the pod is being deleted already; nothing to do.
	Terminating
	// Gone: the pod no longer exists.
	Gone
	// NotYet: the backoff of an earlier attempt still runs for RetryIn.
	NotYet
)

// Attempt is what Evict did.
type Attempt struct {
	Result Result
	// Kind is the kind of a Skipped pod.
	Kind podutil.NotEvictable
	// Err is why the Eviction API refused; Blocked is true when a
	// PodDisruptionBudget refused, and Budget names it when the API did.
	Err     error
	Blocked bool
	Budget  string
	// RetryIn is when to try again: after a refusal, the rest of the
	// backoff, or after a granted eviction, when the pod did not go.
	RetryIn time.Duration
	// Granted, for a Terminating pod, is true when the Eviction API started
	// its termination: this evictor's eviction (as far as this process
	// knows, until the key is forgotten), or any other, as the pod's
	// DisruptionTarget condition says, which a new leader reads too.
	Granted bool
	// TerminatingFor, for a Terminating pod, is how long ago this process
	// learnt it terminates, on its own clock: since it granted the
	// eviction, or since it first saw the pod terminating.
	TerminatingFor time.Duration
}

// Evictor evicts pods through the Eviction API (pods/<name>/eviction) with
// a UID precondition and a backoff per key, for the eviction request
// controller and the default evictor of lifecycle.k8s.io alike.
type Evictor struct {
	Client      kubernetes.Interface
	Backoff     *Backoff
	Clock       clock.PassiveClock
	CallTimeout time.Duration
	// EveryPod evicts DaemonSet and mirror pods too, as the default evictor
	// of lifecycle.k8s.io does (its API's documentation: the evictor evicts
	// the target through the Eviction API); the revision of our API leaves
	// them to their owners (Skipped).
	EveryPod bool
}

// Evict tries to evict pod, whose UID must be uid, for the request key,
// unless the pod is terminating, is one the Eviction API is not used for
// (unless EveryPod), or the backoff of an earlier attempt still runs.
func (e *Evictor) Evict(ctx context.Context, key string, pod *corev1.Pod, uid types.UID) Attempt {
	if podutil.IsTerminating(pod) {
		since := e.Backoff.Started(key, e.Clock.Now())
		return Attempt{Result: Terminating, Granted: e.Backoff.Granted(key) || podutil.EvictedThroughEvictionAPI(pod), TerminatingFor: since}
	}
	if kind := podutil.WhyNotEvictable(pod); kind != "" && !e.EveryPod {
		return Attempt{Result: Skipped, Kind: kind}
	}
	now := e.Clock.Now()
	if wait := e.Backoff.Wait(key, now); wait > 0 {
		return Attempt{Result: NotYet, RetryIn: wait}
	}
	callCtx, cancel := context.WithTimeout(ctx, e.CallTimeout)
	defer cancel()
	err := e.Client.PolicyV1().Evictions(pod.Namespace).Evict(callCtx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		// The UID precondition keeps a pod that replaced ours under the
		// same name from being evicted in its place.
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(uid)}},
	})
	switch {
	case err == nil:
		e.Backoff.Succeeded(key, now)
		// The pod's termination wakes the controller; should it never
		// come, the eviction is retried once the expectation times out.
		return Attempt{Result: Evicted, RetryIn: ExpectationTimeout}
	case apierrors.IsNotFound(err):
		return Attempt{Result: Gone}
	}
	var retryAfter time.Duration
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok {
		retryAfter = time.Duration(seconds) * time.Second
	}
	return Attempt{
		Result: Refused, Err: err, Blocked: apierrors.IsTooManyRequests(err), Budget: RefusingBudget(err),
		RetryIn: e.Backoff.Failed(key, now, retryAfter),
	}
}

// RefusingBudget is the name of the PodDisruptionBudget that err, a refusal
// of the Eviction API, says refused it; "" when it names none.
func RefusingBudget(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return ""
	}
	const prefix = "The disruption budget "
	for _, cause := range status.Status().Details.Causes {
		if cause.Type != policyv1.DisruptionBudgetCause || !strings.HasPrefix(cause.Message, prefix) {
			continue
		}
		if name, _, ok := strings.Cut(strings.TrimPrefix(cause.Message, prefix), " "); ok {
			return name
		}
	}
	return ""
}
