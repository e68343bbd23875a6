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
	"time"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// policy is what the bridge decides by besides what it read.
type policy struct {
	api evictionapi.API
	// inactivity is how long the bridge keeps a request no eviction
	// reaches (withdrawalAge); it records a call at most every
	// unrecordedCalls.
	inactivity time.Duration
	retryAfter time.Duration
}

func (b *Bridge) policy() policy {
	return policy{api: b.cfg.Participant.API(), inactivity: b.cfg.Inactivity, retryAfter: b.cfg.RetryAfter}
}

// plan is a decision and the writes that carry it out, in their order.
type plan struct {
	Decision
	// request asks for the pod's eviction as the bridge: it applies the
	// bridge's request with annotations, in one write. A failure refuses
	// the eviction naming it.
	request bool
	// recordCall re-applies the bridge's request, which exists, with
	// annotations: the call that reached it. A failure leaves the
	// refusal as it is; the next call records it.
	recordCall bool
	// annotations are those of the bridge's request: this call's time
	// and the callers with this one.
	annotations map[string]string
	// markPod marks the pod eviction-in-progress for the descheduler. A
	// failure refuses the eviction naming it.
	markPod bool
}

// decide is the bridge's answer to the eviction o read, and the writes it
// takes. It reads and writes nothing: every answer rests on o. An eviction
// the bridge would refuse that asks to skip the pod's participants (a
// drain's escalation) is answered by skip, and writes nothing: no request
// is asked for a pod whose evictor means to go past its participants.
func decide(o observation, p policy) plan {
	pl := decideTurn(o, p)
	if pl.Allowed || !o.eviction.AsksToSkip {
		return pl
	}
	return plan{Decision: skip(o, p)}
}

// decideTurn is the answer to an eviction that waits for the pod's
// participants' turns.
func decideTurn(o observation, p policy) plan {
	pod := o.pod
	switch {
	case !o.optedIn:
		return allow(OutcomeNotOptedIn)
	case o.exempt:
		return allow(OutcomeExempt)
	case pod == nil:
		// kube-apiserver answers 404 itself.
		return allow(OutcomePodGone)
	case !p.api.DeclaresParticipants(pod):
		return allow(OutcomeNoParticipants)
	case podutil.IsTerminating(pod) || podutil.IsTerminal(pod):
		return allow(OutcomePodTerminating)
	case o.statusErr != nil:
		// From here on the pod is protected: what the bridge cannot read
		// or write keeps it.
		return plan{Decision: statusUnknown(p, pod, o.statusErr)}
	}
	s := o.status
	switch {
	case s.Evicting:
		return allow(OutcomeEvictionStep)
	case s.Complete && !s.Canceled:
		return allow(OutcomeComplete)
	case s.Exists && s.Locked && !s.Requested:
		// The active interceptor forbids canceling, so the bridge cannot
		// join; the eviction goes ahead without it, in its own time.
		return plan{Decision: refuse(OutcomeForbidden, p, pod, s)}
	}
	pl := plan{Decision: refuse(OutcomeRequested, p, pod, s), request: true}
	if s.Requested {
		pl = plan{Decision: refuse(OutcomeInProgress, p, pod, s), recordCall: callToRecord(s, o.eviction, o.now, p.inactivity)}
	}
	if o.eviction.DryRun {
		return plan{Decision: pl.Decision}
	}
	if pl.request || pl.recordCall {
		pl.annotations = callAnnotations(s, o.eviction, o.now)
	}
	_, background := pod.Annotations[RequestEvictOnlyAnnotation]
	_, marked := pod.Annotations[EvictionInProgressAnnotation]
	pl.markPod = background && !marked
	return pl
}

func allow(outcome string) plan {
	return plan{Decision: Decision{Allowed: true, Outcome: outcome}}
}

// callToRecord is true when the call of e at now is news to the request
// the bridge already holds: its last recorded call is unrecordedCalls old,
// or e's caller is not among the callers. A client retrying every few
// seconds costs one write a minute or so.
func callToRecord(s participant.Status, e Eviction, now time.Time, inactivity time.Duration) bool {
	last, err := time.Parse(time.RFC3339, s.Annotations[LastCallAnnotation])
	return err != nil || now.Sub(last) >= unrecordedCalls(inactivity) || addCaller(s.Annotations, e.Caller()) != s.Annotations[CallersAnnotation]
}

// unrecordedCalls is how long after the last call the bridge recorded
// (to the second, rounded down) calls it did not record may have reached
// it: a quarter of the inactivity time-out (callToRecord).
func unrecordedCalls(inactivity time.Duration) time.Duration {
	return inactivity / 4
}

// withdrawalAge is how old the recorded last call is when the bridge
// withdraws: the inactivity time-out counted from the last call it may
// not have recorded, so that no caller that asked within the time-out
// loses its request. A request is withdrawn between the time-out and a
// quarter more after the last call.
func withdrawalAge(inactivity time.Duration) time.Duration {
	return inactivity + unrecordedCalls(inactivity)
}

// callAnnotations are the bridge's annotations of its request once the
// call of e at now reached it.
func callAnnotations(s participant.Status, e Eviction, now time.Time) map[string]string {
	return map[string]string{
		LastCallAnnotation: now.UTC().Format(time.RFC3339),
		CallersAnnotation:  addCaller(s.Annotations, e.Caller()),
	}
}
