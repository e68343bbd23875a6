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

package v1

import (
	policyv1 "k8s.io/api/policy/v1"
)

// SkipParticipantsAnnotation, on a policy/v1 Eviction, asks the eviction
// API bridge to let the eviction through although the pod's interceptors
// or responders have not all had their turn: a drain's escalation once its
// deadline passed. Its value says why. The bridge grants it only to a
// caller that may delete the pod, who could end the pod without any
// eviction; PodDisruptionBudgets still apply.
const SkipParticipantsAnnotation = "evictionrequest.coordination.k8s.io/skip-participants"

// SkipParticipants marks eviction as asking to skip the pod's participants,
// for reason.
func SkipParticipants(eviction *policyv1.Eviction, reason string) {
	if eviction.Annotations == nil {
		eviction.Annotations = map[string]string{}
	}
	eviction.Annotations[SkipParticipantsAnnotation] = reason
}

// SkipsParticipants is the reason eviction gives for skipping the pod's
// participants, and whether it asks to.
func SkipsParticipants(eviction *policyv1.Eviction) (string, bool) {
	reason, ok := eviction.Annotations[SkipParticipantsAnnotation]
	return reason, ok
}
