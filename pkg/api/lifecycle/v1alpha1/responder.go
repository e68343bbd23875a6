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

package v1alpha1

import (
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxResponderMessage is the longest status.responders[].message
// kube-apiserver accepts, in characters.
const MaxResponderMessage = 4000

// ResponderMessage is message cut to what kube-apiserver accepts, on a
// character boundary.
func ResponderMessage(message string) string {
	if utf8.RuneCountInString(message) <= MaxResponderMessage {
		return message
	}
	runes := 0
	for i := range message {
		if runes == MaxResponderMessage {
			return message[:i]
		}
		runes++
	}
	return message
}

// ExpectedCompletion is the expectedCompletionTime a responder writes for
// expected at now: kube-apiserver refuses one in the past.
func ExpectedCompletion(expected, now time.Time) metav1.Time {
	if expected.Before(now) {
		expected = now
	}
	return metav1.NewTime(expected)
}

// NextHeartbeat is the heartbeatTime a responder writes at now after its
// last one: now, unless the last is less than MinHeartbeatInterval old,
// which it keeps so as not to load the control plane.
func NextHeartbeat(last *metav1.Time, now time.Time) metav1.Time {
	if last != nil && now.Sub(last.Time) < MinHeartbeatInterval {
		return *last
	}
	return metav1.NewTime(now)
}

// ResponderDeadline is when the active responder is passed over: within
// after its last heartbeat, or after since (when its turn began) when it has
// not sent one. The rule is the one of coordination.k8s.io's interceptors
// (pkg/apis/coordination/helper.HeartbeatDeadline), counted from the turn
// instead of the request's creation.
func ResponderDeadline(last *metav1.Time, since metav1.Time, within time.Duration) time.Time {
	if last != nil {
		since = *last
	}
	return since.Add(within)
}
