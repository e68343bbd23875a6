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

package bridge

import (
	"context"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// Eviction is one call of pods/eviction, as admission sees it.
type Eviction struct {
	Namespace, Pod string
	// User is the caller's user name; DryRun is true for a dry run, which
	// writes nothing and is answered as the real one would be.
	User   string
	DryRun bool
	// Groups, UID and Extra are the rest of the caller's identity, as
	// kube-apiserver reported it: what an access review of the caller
	// asks about.
	Groups []string
	UID    string
	Extra  map[string]authenticationv1.ExtraValue
	// SkipParticipants is the reason the eviction gives for skipping the
	// pod's participants (policyutil.SkipParticipantsAnnotation: a drain's
	// escalation at its deadline), and AsksToSkip whether it asks to.
	SkipParticipants string
	AsksToSkip       bool
	// Authenticated is true when the review came from kube-apiserver, as
	// its client certificate proved (Config.Callers): only then is User
	// the name kube-apiserver authenticated.
	Authenticated bool
}

// Caller is how the bridge names the caller of e in what it records: the
// user kube-apiserver reported, marked when the review that named it did
// not prove it came from kube-apiserver.
func (e Eviction) Caller() string {
	if e.Authenticated {
		return e.User
	}
	return e.User + " " + UnauthenticatedMark
}

// UnauthenticatedMark follows a caller's name that only an unauthenticated
// review claimed (the bridge runs without --eviction-bridge-client-ca-file).
const UnauthenticatedMark = "(unauthenticated)"

// Outcomes of a decision, the label of the decisions metric.
const (
	OutcomeNotOptedIn     = "not-opted-in"
	OutcomeNoParticipants = "no-participants"
	OutcomePodGone        = "pod-gone"
	OutcomePodTerminating = "pod-terminating"
	OutcomeExempt         = "exempt"
	OutcomeEvictionStep   = "eviction-step"
	OutcomeComplete       = "request-complete"
	OutcomeRequested      = "requested"
	OutcomeInProgress     = "in-progress"
	OutcomeForbidden      = "cancellation-forbidden"
	// OutcomeSkipped lets through an eviction that asked to skip the
	// pod's participants, of a caller that may delete the pod.
	OutcomeSkipped = "participants-skipped"
	// OutcomeSkipForbidden refuses, with 403, an eviction that asked to
	// skip the pod's participants, of a caller that may not delete the pod.
	OutcomeSkipForbidden = "skip-forbidden"
	// OutcomeFailed is a refusal of an eviction of a protected pod the
	// bridge could not carry through: reading the pod's request, writing
	// it (a full quota, a conflict, a time-out, a refusal of admission or
	// validation) or marking the pod for the descheduler failed. The pod
	// stays: a failure the bridge knows of never lets it go.
	OutcomeFailed = "failed"
)

// Decision is the bridge's answer to an Eviction.
type Decision struct {
	Allowed bool
	// Outcome labels the decision in the metrics.
	Outcome string
	// Message, for a refusal, names the request and whose turn it is, or
	// what failed.
	Message string
	// RetryAfter, for a refusal, is how soon to ask again.
	RetryAfter time.Duration
	// Code, for a refusal, is its HTTP status: 429 (Too Many Requests)
	// when zero.
	Code int32
}

// code is the HTTP status of a refusal d.
func (d Decision) code() int32 {
	if d.Code == 0 {
		return http.StatusTooManyRequests
	}
	return d.Code
}

// Decide answers e in one pass: it reads what the answer rests on
// (observe), decides (decide, which reads nothing and writes nothing),
// writes what the decision needs (write: the bridge's request with its
// annotations in one write, and the descheduler's mark of the pod), and
// answers.
//
// An error is only what the bridge cannot know: whether the namespace
// opted in, or the pod, could not be read; kube-apiserver then applies the
// webhook's failurePolicy. Once the pod is known to be protected, every
// failure is answered with a refusal that names it (OutcomeFailed).
func (b *Bridge) Decide(ctx context.Context, e Eviction) (Decision, error) {
	o, err := b.observe(ctx, e)
	if err != nil {
		return Decision{}, err
	}
	return b.write(ctx, o, decide(o, b.policy())), nil
}
