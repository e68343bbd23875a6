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
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// decided is what a test compares of a plan.
type decided struct {
	Allowed             bool
	Outcome             string
	Request, RecordCall bool
	Annotations         map[string]string
	MarkPod             bool
	// Code is a refusal's status other than 429.
	Code int32
}

func decidedOf(pl plan) decided {
	return decided{Allowed: pl.Allowed, Outcome: pl.Outcome, Request: pl.request, RecordCall: pl.recordCall, Annotations: pl.annotations, MarkPod: pl.markPod, Code: pl.Code}
}

// The bridge's decision rests on what it read alone: every answer, and
// every write it takes, from one observation.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	stamp := func(d time.Duration) string { return now.Add(-d).UTC().Format(time.RFC3339) }
	p := policy{api: evictionapi.Coordination, inactivity: 4 * time.Minute, retryAfter: 5 * time.Second}
	intercepted := interceptedPod("db-0").Obj()
	background := interceptedPod("db-0").Annotation(RequestEvictOnlyAnnotation, "").Obj()
	marked := interceptedPod("db-0").Annotation(RequestEvictOnlyAnnotation, "").Annotation(EvictionInProgressAnnotation, "").Obj()
	none := participant.Status{Request: "uid-db-0"}
	held := func(annotations map[string]string) participant.Status {
		return participant.Status{Request: "uid-db-0", Exists: true, Requested: true, ActiveInterceptor: "surge.example.com", Annotations: annotations}
	}
	// escalating asks to skip the participants, as a drain does at its
	// deadline; mayDelete says whether its caller may delete the pod.
	escalating := func(o *observation, mayDelete bool) {
		o.eviction.SkipParticipants, o.eviction.AsksToSkip, o.mayDelete = "the drain's deadline passed", true, mayDelete
	}
	recorded := map[string]string{LastCallAnnotation: stamp(30 * time.Second), CallersAnnotation: drainer}
	thisCall := map[string]string{LastCallAnnotation: now.Format(time.RFC3339), CallersAnnotation: drainer}
	for _, tc := range []struct {
		name string
		// o is the observation: opted in, by drainer, of intercepted, at
		// now, unless the case changes it.
		change func(o *observation)
		// api is the bridge's, coordination.k8s.io unless set.
		api  evictionapi.API
		want decided
		// message holds these, for a refusal.
		message []string
	}{
		{name: "a namespace that did not opt in", change: func(o *observation) { o.optedIn = false },
			want: decided{Allowed: true, Outcome: OutcomeNotOptedIn}},
		{name: "an exempt caller", change: func(o *observation) { o.exempt = true },
			want: decided{Allowed: true, Outcome: OutcomeExempt}},
		{name: "a pod that does not exist", change: func(o *observation) { o.pod = nil },
			want: decided{Allowed: true, Outcome: OutcomePodGone}},
		{name: "a pod without interceptors", change: func(o *observation) { o.pod = wrappers.MakePod("web-0").Obj() },
			want: decided{Allowed: true, Outcome: OutcomeNoParticipants}},
		{name: "on lifecycle.k8s.io, a pod with interceptors but no responders", api: evictionapi.Lifecycle,
			want: decided{Allowed: true, Outcome: OutcomeNoParticipants}},
		{name: "a terminating pod", change: func(o *observation) { o.pod = interceptedPod("db-0").Terminating(now).Obj() },
			want: decided{Allowed: true, Outcome: OutcomePodTerminating}},
		{name: "a pod that finished", change: func(o *observation) { o.pod = interceptedPod("db-0").Phase(corev1.PodSucceeded).Obj() },
			want: decided{Allowed: true, Outcome: OutcomePodTerminating}},
		{name: "a request that cannot be read", change: func(o *observation) { o.statusErr = errors.New("the cache broke") },
			want:    decided{Outcome: OutcomeFailed},
			message: []string{"the EvictionRequest of pod " + wrappers.DefaultNamespace + "/db-0 (coordination.k8s.io) could not be read: the cache broke", "retry later"}},
		{name: "the eviction step", change: func(o *observation) { o.status = participant.Status{Exists: true, Requested: true, Evicting: true} },
			want: decided{Allowed: true, Outcome: OutcomeEvictionStep}},
		{name: "a complete request", change: func(o *observation) { o.status = participant.Status{Exists: true, Complete: true} },
			want: decided{Allowed: true, Outcome: OutcomeComplete}},
		{name: "no request: the bridge asks, with the call, in one write",
			want:    decided{Outcome: OutcomeRequested, Request: true, Annotations: thisCall},
			message: []string{Evacuation, "evictionrequest/uid-db-0 (coordination.k8s.io)", "waiting for its first interceptor"}},
		{name: "a canceled request: the bridge asks again", change: func(o *observation) {
			o.status = participant.Status{Request: "uid-db-0", Exists: true, Complete: true, Canceled: true}
		}, want: decided{Outcome: OutcomeRequested, Request: true, Annotations: thisCall}},
		{name: "another requester's request: the bridge joins, keeping the callers it recorded", change: func(o *observation) {
			o.status = participant.Status{Request: "uid-db-0", Exists: true, OtherRequesters: 1, Annotations: map[string]string{CallersAnnotation: "alice"}}
		}, want: decided{Outcome: OutcomeRequested, Request: true, Annotations: map[string]string{LastCallAnnotation: thisCall[LastCallAnnotation], CallersAnnotation: "alice," + drainer}}},
		{name: "another's request that forbids canceling: refused without joining", change: func(o *observation) {
			o.status = participant.Status{Request: "uid-db-0", Exists: true, Locked: true, ActiveInterceptor: "migrate.example.com"}
		}, want: decided{Outcome: OutcomeForbidden}, message: []string{Evacuation, "it is the turn of migrate.example.com"}},
		{name: "in progress, the caller recorded half a minute ago", change: func(o *observation) { o.status = held(recorded) },
			want: decided{Outcome: OutcomeInProgress}, message: []string{Evacuation, "it is the turn of surge.example.com"}},
		{name: "in progress, the bridge's own request that forbids canceling", change: func(o *observation) {
			o.status = held(recorded)
			o.status.Locked = true
		}, want: decided{Outcome: OutcomeInProgress}, message: []string{Evacuation, "it is the turn of surge.example.com"}},
		{name: "in progress, the last call a quarter of the inactivity time-out ago", change: func(o *observation) {
			o.status = held(map[string]string{LastCallAnnotation: stamp(time.Minute), CallersAnnotation: drainer})
			o.now = now.Add(time.Second)
		}, want: decided{Outcome: OutcomeInProgress, RecordCall: true, Annotations: map[string]string{
			LastCallAnnotation: now.Add(time.Second).Format(time.RFC3339), CallersAnnotation: drainer}}},
		{name: "in progress, a new caller", change: func(o *observation) { o.status = held(recorded); o.eviction.User = "alice" },
			want: decided{Outcome: OutcomeInProgress, RecordCall: true, Annotations: map[string]string{
				LastCallAnnotation: thisCall[LastCallAnnotation], CallersAnnotation: drainer + ",alice"}}},
		{name: "in progress, no call recorded", change: func(o *observation) { o.status = held(nil) },
			want: decided{Outcome: OutcomeInProgress, RecordCall: true, Annotations: thisCall}},
		{name: "a dry run that would ask", change: func(o *observation) { o.eviction.DryRun = true },
			want: decided{Outcome: OutcomeRequested}},
		{name: "a dry run that would record the call", change: func(o *observation) { o.status = held(nil); o.eviction.DryRun = true; o.pod = background },
			want: decided{Outcome: OutcomeInProgress}},
		{name: "the descheduler's background eviction: the pod is marked", change: func(o *observation) { o.pod = background },
			want: decided{Outcome: OutcomeRequested, Request: true, Annotations: thisCall, MarkPod: true}},
		{name: "in progress, the descheduler's pod not marked (a write that failed)", change: func(o *observation) { o.pod = background; o.status = held(recorded) },
			want: decided{Outcome: OutcomeInProgress, MarkPod: true}},
		{name: "in progress, the descheduler's pod marked", change: func(o *observation) { o.pod = marked; o.status = held(recorded) },
			want: decided{Outcome: OutcomeInProgress}},
		{name: "an escalation of a caller that may delete the pod: through, nothing written", change: func(o *observation) { escalating(o, true) },
			want: decided{Allowed: true, Outcome: OutcomeSkipped}},
		{name: "an escalation of a caller that may delete the pod whose request cannot be read", change: func(o *observation) {
			escalating(o, true)
			o.statusErr = errors.New("the cache broke")
		}, want: decided{Allowed: true, Outcome: OutcomeSkipped}},
		{name: "an escalation of a caller that may not delete the pod: 403, nothing written", change: func(o *observation) { escalating(o, false) },
			want:    decided{Outcome: OutcomeSkipForbidden, Code: 403},
			message: []string{"pod " + wrappers.DefaultNamespace + "/db-0 asks to skip its participants (the drain's deadline passed)", "only to a caller that may delete the pod: " + drainer + " may not"}},
		{name: "an escalation in progress, of a caller that may not delete the pod", change: func(o *observation) { escalating(o, false); o.status = held(recorded) },
			want: decided{Outcome: OutcomeSkipForbidden, Code: 403}},
		{name: "a dry run of an escalation of a caller that may not delete the pod", change: func(o *observation) { escalating(o, false); o.eviction.DryRun = true },
			want: decided{Outcome: OutcomeSkipForbidden, Code: 403}},
		{name: "an escalation named only by an unauthenticated review: 403", change: func(o *observation) {
			escalating(o, true)
			o.eviction.Authenticated = false
		}, want: decided{Outcome: OutcomeSkipForbidden, Code: 403}, message: []string{"only on a review kube-apiserver proved it sent"}},
		{name: "an escalation whose caller's access could not be reviewed", change: func(o *observation) {
			escalating(o, true)
			o.accessErr = errors.New("kube-apiserver timed out")
		}, want: decided{Outcome: OutcomeFailed}, message: []string{"could not be reviewed: kube-apiserver timed out", "retry later"}},
		{name: "an escalation at the eviction step: through, as any eviction", change: func(o *observation) {
			escalating(o, false)
			o.status = participant.Status{Exists: true, Requested: true, Evicting: true}
		}, want: decided{Allowed: true, Outcome: OutcomeEvictionStep}},
		{name: "an escalation of a pod without interceptors", change: func(o *observation) { escalating(o, false); o.pod = wrappers.MakePod("web-0").Obj() },
			want: decided{Allowed: true, Outcome: OutcomeNoParticipants}},
		{name: "an escalation in a namespace that did not opt in", change: func(o *observation) { escalating(o, false); o.optedIn = false },
			want: decided{Allowed: true, Outcome: OutcomeNotOptedIn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := observation{eviction: Eviction{Namespace: intercepted.Namespace, Pod: intercepted.Name, User: drainer, Authenticated: true},
				now: now, optedIn: true, pod: intercepted, status: none}
			p := p
			if tc.change != nil {
				tc.change(&o)
			}
			if tc.api != "" {
				p.api = tc.api
			}
			pl := decide(o, p)
			if diff := cmp.Diff(tc.want, decidedOf(pl)); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if wantRetry := !pl.Allowed && pl.code() == http.StatusTooManyRequests; wantRetry && pl.RetryAfter != p.retryAfter || !wantRetry && pl.RetryAfter != 0 {
				t.Errorf("Retry-After %v of a decision %+v, want %v for a 429 and none otherwise", pl.RetryAfter, decidedOf(pl), p.retryAfter)
			}
			for _, want := range tc.message {
				if !strings.Contains(pl.Message, want) {
					t.Errorf("message %q lacks %q", pl.Message, want)
				}
			}
			if pl.Outcome == OutcomeFailed && strings.Contains(pl.Message, Evacuation) {
				t.Errorf("message %q of a failure says %q: nothing is under way", pl.Message, Evacuation)
			}
		})
	}
}

// The bridge asks kube-apiserver's authorizer about a caller only when its
// answer rests on it: an escalation kube-apiserver sent that the bridge
// would otherwise refuse.
func TestNeedsAccessReview(t *testing.T) {
	p := policy{api: evictionapi.Coordination, inactivity: 4 * time.Minute, retryAfter: 5 * time.Second}
	intercepted := interceptedPod("db-0").Obj()
	escalation := Eviction{Namespace: intercepted.Namespace, Pod: intercepted.Name, User: drainer, Authenticated: true, AsksToSkip: true}
	for _, tc := range []struct {
		name   string
		change func(o *observation)
		want   bool
	}{
		{name: "an escalation the bridge would refuse", want: true},
		{name: "an eviction that does not ask to skip", change: func(o *observation) { o.eviction.AsksToSkip = false }},
		{name: "an escalation of an unauthenticated review", change: func(o *observation) { o.eviction.Authenticated = false }},
		{name: "an escalation of a pod without interceptors", change: func(o *observation) { o.pod = wrappers.MakePod("web-0").Obj() }},
		{name: "an escalation at the eviction step", change: func(o *observation) { o.status = participant.Status{Exists: true, Requested: true, Evicting: true} }},
		{name: "an escalation whose request cannot be read", change: func(o *observation) { o.statusErr = errors.New("the cache broke") }, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := observation{eviction: escalation, optedIn: true, pod: intercepted, status: participant.Status{Request: "uid-db-0"}}
			if tc.change != nil {
				tc.change(&o)
			}
			if got := o.needsAccessReview(p); got != tc.want {
				t.Errorf("needsAccessReview = %v, want %v", got, tc.want)
			}
		})
	}
}
