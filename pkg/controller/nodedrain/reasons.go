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

package nodedrain

// Reasons of the node lifecycle conditions corev1.NodeDrainInProgress and
// corev1.NodeDrained that the declarative node drain writes: the reason
// tells who drains the node, and the drain clears only the conditions it
// wrote (IsDrainReason).
const (
	// ReasonDrainStarted: the declarative node drain requested the
	// eviction of the node's pods and waits for them (DrainInProgress
	// True, Drained False).
	ReasonDrainStarted = "EvictionRequestNodeDrainStarted"
	// ReasonDrainCompleted: no pod the declarative node drain evicts
	// is left (DrainInProgress False, Drained True).
	ReasonDrainCompleted = "EvictionRequestNodeDrainCompleted"
	// ReasonDrainRefused: pods the drain's policy refuses (as kubectl
	// drain refuses them) stopped the declarative node drain before it
	// changed anything (both False).
	ReasonDrainRefused = "EvictionRequestNodeDrainRefused"
	// ReasonDrainQueued: the declarative node drain waits for the
	// budget of nodes drained at once (both False); the message gives its
	// place in the queue.
	ReasonDrainQueued = "EvictionRequestNodeDrainQueued"
	// ReasonDrainFailed: the declarative node drain's deadline passed
	// with pods left and its escalation is to fail (both False); the
	// requests stay, and the drain completes if the pods leave after all.
	ReasonDrainFailed = "EvictionRequestNodeDrainFailed"
	// ReasonShutdownDrainStarted and ReasonShutdownDrainCompleted are
	// those of the declarative node drain for a graceful node shutdown:
	// they differ so that the drain goes on after the kubelet is gone and
	// its conditions turn Unknown.
	ReasonShutdownDrainStarted   = "EvictionRequestShutdownDrainStarted"
	ReasonShutdownDrainCompleted = "EvictionRequestShutdownDrainCompleted"
)

// Reasons of the declarative drain's conditions before it took Kubernetes
// 1.37's node lifecycle conditions' style: still its own for one release,
// so that a drain under way at the upgrade goes on and its old conditions
// are cleared.
const (
	legacyReasonEvictingPods        = "EvictingPods"
	legacyReasonAllPodsGone         = "AllPodsGone"
	legacyReasonPodsRemaining       = "PodsRemaining"
	legacyReasonDrainRefused        = "DrainRefused"
	legacyReasonShutdownEvicting    = "NodeShuttingDown"
	legacyReasonShutdownAllPodsGone = "AllPodsGoneBeforeShutdown"
)

// IsDrainReason reports whether reason is one the declarative node
// drain writes, or wrote before this release: the conditions it may clear.
func IsDrainReason(reason string) bool {
	switch reason {
	case ReasonDrainStarted, ReasonDrainCompleted, ReasonDrainRefused, ReasonDrainFailed, ReasonDrainQueued,
		legacyReasonEvictingPods, legacyReasonAllPodsGone, legacyReasonPodsRemaining, legacyReasonDrainRefused:
		return true
	}
	return IsShutdownDrainReason(reason)
}

// IsShutdownDrainReason reports whether reason is one of the declarative
// node drain's for a graceful shutdown.
func IsShutdownDrainReason(reason string) bool {
	switch reason {
	case ReasonShutdownDrainStarted, ReasonShutdownDrainCompleted, legacyReasonShutdownEvicting, legacyReasonShutdownAllPodsGone:
		return true
	}
	return false
}
