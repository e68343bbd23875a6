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
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// refuse is the 429 of an eviction the process has not reached the
// eviction step of: it names the request and whose turn it is, and says
// Evacuation, for the descheduler, because the pod's eviction is under way.
func refuse(outcome string, p policy, pod *corev1.Pod, s participant.Status) Decision {
	return Decision{
		Outcome:    outcome,
		RetryAfter: p.retryAfter,
		Message: fmt.Sprintf("%s: pod %s/%s leaves through evictionrequest/%s (%s); %s; retry later",
			Evacuation, pod.Namespace, pod.Name, s.Request, p.api.Group(), turn(s)),
	}
}

// turn says where the pod's eviction stands, for the refusal.
func turn(s participant.Status) string {
	switch {
	case s.ActiveInterceptor != "" && !s.InterceptorDone:
		return "it is the turn of " + s.ActiveInterceptor
	case s.Locked:
		return "its interceptor forbids canceling it and it goes ahead"
	case s.AwaitingInterceptor || !s.Exists:
		return "waiting for its first interceptor or responder to take its turn"
	}
	return "waiting for the next interceptor or responder"
}

// The refusals of a protected pod's eviction the bridge could not carry
// through (OutcomeFailed) name what failed and why, and do not say
// Evacuation: nothing is under way, and the descheduler, which would take
// it for an eviction in progress and not ask again for ten minutes or
// more, asks again at its next run, as after a PodDisruptionBudget's 429.

// statusUnknown refuses the eviction of pod whose request could not be
// read: the bridge cannot tell whether the eviction step is reached.
func statusUnknown(p policy, pod *corev1.Pod, err error) Decision {
	return failed(p, fmt.Sprintf("the EvictionRequest of pod %s/%s (%s) could not be read: %v; the pod is not evicted until the eviction API bridge can tell where its eviction stands",
		pod.Namespace, pod.Name, p.api.Group(), err))
}

// requestFailed refuses the eviction of pod whose request the bridge could
// not write: a full quota, a conflict, a refusal of admission or
// validation, a time-out of kube-apiserver.
func requestFailed(p policy, pod *corev1.Pod, s participant.Status, err error) Decision {
	verb := "created"
	if s.Exists {
		verb = "updated"
	}
	return failed(p, fmt.Sprintf("the EvictionRequest for pod %s/%s (%s) could not be %s: %v; the pod is not evicted until its request exists",
		pod.Namespace, pod.Name, p.api.Group(), verb, err))
}

// markFailed refuses the eviction of pod, whose request exists, that the
// bridge could not mark for the descheduler: without the mark the
// descheduler would not know when the eviction ends.
func markFailed(p policy, pod *corev1.Pod, s participant.Status, err error) Decision {
	return failed(p, fmt.Sprintf("pod %s/%s leaves through evictionrequest/%s (%s), but could not be annotated %s for the descheduler: %v",
		pod.Namespace, pod.Name, s.Request, p.api.Group(), EvictionInProgressAnnotation, err))
}

func failed(p policy, message string) Decision {
	return Decision{Outcome: OutcomeFailed, RetryAfter: p.retryAfter, Message: message + "; retry later"}
}

// skip answers an eviction that asks to skip the participants of its pod,
// which are protected (a drain's escalation at its deadline): through for
// a caller that may delete the pod, 403 for one that may not or that no
// authenticated review names, and 429 while the bridge cannot tell.
func skip(o observation, p policy) Decision {
	pod, e := o.pod, o.eviction
	switch {
	case !e.Authenticated:
		// Whoever posts a review names the caller: the bridge asks no
		// authorizer about a caller kube-apiserver did not vouch for.
		return Decision{Outcome: OutcomeSkipForbidden, Code: http.StatusForbidden,
			Message: fmt.Sprintf("the eviction of pod %s/%s asks to skip its participants (%s), which the eviction API bridge grants only on a review kube-apiserver proved it sent (--eviction-bridge-client-ca-file)",
				pod.Namespace, pod.Name, e.SkipParticipants)}
	case o.accessErr != nil:
		return failed(p, fmt.Sprintf("the eviction of pod %s/%s asks to skip its participants (%s), and whether %s may delete the pod could not be reviewed: %v; the pod is not evicted until it can",
			pod.Namespace, pod.Name, e.SkipParticipants, e.Caller(), o.accessErr))
	case o.mayDelete:
		return Decision{Allowed: true, Outcome: OutcomeSkipped}
	}
	return Decision{Outcome: OutcomeSkipForbidden, Code: http.StatusForbidden,
		Message: fmt.Sprintf("the eviction of pod %s/%s asks to skip its participants (%s), which the eviction API bridge grants only to a caller that may delete the pod: %s may not",
			pod.Namespace, pod.Name, e.SkipParticipants, e.Caller())}
}
