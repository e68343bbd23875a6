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

package lifecycle

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
)

// The messages of the conditions the controller writes, in the words of
// the upstream pull request (kubernetes/kubernetes#137133): operators grep
// them and runbooks quote them, and a responder or requester must not see a
// difference when upstream's controller replaces this one. Events say more.
const (
	// MessageUnsupportedTarget: the Eviction or request targets no pod.
	MessageUnsupportedTarget = "Unsupported target type."
	// MessageDuplicateEviction: another Eviction of the pod is the active one.
	MessageDuplicateEviction = "Active Eviction already exists for the same target."
	// MessageSchedulingGroup: the pod belongs to a scheduling group, whose
	// eviction the API does not support yet.
	MessageSchedulingGroup = "Target pod references a SchedulingGroup. Eviction is currently not supported."
	// MessagePodNotFound: a request's pod does not exist, and no Eviction of
	// it does.
	MessagePodNotFound = "Target pod not found."
	// MessagePodDeleted and MessagePodTerminal: the target was evicted.
	MessagePodDeleted  = "Target pod has been deleted."
	MessagePodTerminal = "Pod has reached terminal state."
	// MessageCanceled: no request wants the eviction any more.
	MessageCanceled = "No active requesters with eviction intent."
	// MessageNoFurtherResponder: every responder's turn ended and the pod
	// is still there.
	MessageNoFurtherResponder = "All responders have completed without evicting the target."
	// MessageAwaitingEviction: a request's Eviction has not reported yet.
	MessageAwaitingEviction = "waiting for an Eviction to report on progress"
	// MessageRespondersNotThePods and MessageResponderBeforeItsTurn: an
	// Eviction whose status someone else set up (untrustedResponders).
	// Ours: upstream's controller follows such an Eviction.
	MessageRespondersNotThePods   = "Target responders do not match the responders of the target pod."
	MessageResponderBeforeItsTurn = "Responder %s has a status from before its turn started."
)

// uidMismatchMessage: a request's pod has been replaced by a pod of its name.
func uidMismatchMessage(want, got types.UID) string {
	return fmt.Sprintf("Target pod UID mismatch: expected %s, got %s.", want, got)
}

// endedMessage is the TargetEvicted condition's message for ending.
func endedMessage(ending eviction.Ending) string {
	if ending == eviction.PodTerminal {
		return MessagePodTerminal
	}
	return MessagePodDeleted
}
