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

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// refuse is the 429 of an eviction the process has not reached the
// eviction step of: it names the request and whose turn it is.
func (b *Bridge) refuse(outcome string, pod *corev1.Pod, status participant.Status) Decision {
	return Decision{
		Outcome:    outcome,
		RetryAfter: b.cfg.RetryAfter,
		Message: fmt.Sprintf("%s: pod %s/%s leaves through evictionrequest/%s (%s); %s; retry later",
			Evacuation, pod.Namespace, pod.Name, status.Request, b.cfg.Participant.API().Group(), turn(status)),
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

// requestRef is the bridge's request of pod, for events.
func (b *Bridge) requestRef(pod *corev1.Pod, status participant.Status) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: string(b.cfg.Participant.API()), Kind: "EvictionRequest",
		Namespace: pod.Namespace, Name: status.Request,
	}
}
