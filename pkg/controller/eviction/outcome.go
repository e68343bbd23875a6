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
	"fmt"

	corev1 "k8s.io/api/core/v1"

	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
)

// Results of an attempt, the result label of both controllers' evictions
// counters.
const (
	// ResultSuccess is an eviction the Eviction API accepted.
	ResultSuccess = "success"
	// ResultBlocked is an eviction refused with 429, usually by a
	// PodDisruptionBudget.
	ResultBlocked = "blocked"
	// ResultFailed is an eviction that failed otherwise: a webhook, a
	// conflict, a 5xx.
	ResultFailed = "failed"
)

// Outcome is what an Attempt says and counts: the message the eviction's
// object shows, the event recorded with it (none when EventReason is ""),
// and the result label of the evictions counter (none when Result is "").
type Outcome struct {
	Message                string
	EventType, EventReason string
	Result                 string
}

// Wording names, in an Outcome's messages, who evicts and who must
// terminate a pod the Eviction API is not used for instead.
type Wording struct {
	Evictor, Instead string
}

// Outcome is what the attempt on pod says; failures counts the refused
// attempts so far, this one included.
func (a Attempt) Outcome(pod string, failures int32, w Wording) Outcome {
	switch a.Result {
	case Terminating:
		if a.Granted {
			// Said once the pod terminates, not when the eviction is
			// granted: a pod gone by then costs no write at all.
			return Outcome{Message: evictedMessage(pod)}
		}
		return Outcome{Message: fmt.Sprintf("Pod %s is terminating; waiting for it to be gone.", pod)}
	case Gone:
		return Outcome{Message: fmt.Sprintf("Pod %s was deleted.", pod)}
	case Skipped:
		return Outcome{
			Message: fmt.Sprintf("Pod %s is a %s pod: %s does not evict it through the Eviction API; %s or its owner must terminate it.",
				pod, a.Kind, w.Evictor, w.Instead),
			EventType: corev1.EventTypeWarning, EventReason: EventEvictionNotSupported,
		}
	case Evicted:
		return Outcome{
			Message:   evictedMessage(pod),
			EventType: corev1.EventTypeNormal, EventReason: EventEvicted, Result: ResultSuccess,
		}
	case Refused:
		result := ResultFailed
		if a.Blocked {
			result = ResultBlocked
		}
		message := fmt.Sprintf("Eviction of pod %s through the Eviction API failed %s, retrying in %s: %v", pod, policyutil.FormatAttempts(failures), a.RetryIn, a.Err)
		if a.Budget != "" {
			message = fmt.Sprintf("Eviction of pod %s through the Eviction API failed %s: PodDisruptionBudget %s refuses it; retrying in %s: %v",
				pod, policyutil.FormatAttempts(failures), a.Budget, a.RetryIn, a.Err)
		}
		return Outcome{Message: message, EventType: corev1.EventTypeWarning, EventReason: EventEvictionFailed, Result: result}
	}
	return Outcome{}
}

// evictedMessage says that pod was evicted and is terminating.
func evictedMessage(pod string) string {
	return fmt.Sprintf("Pod %s was evicted through the Eviction API; waiting for it to terminate.", pod)
}
