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

package drain

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Reasons of the node lifecycle conditions corev1.NodeDrainInProgress and
// corev1.NodeDrained (KEP-5683) that the drains through EvictionRequests
// write, in the style of kubectl drain --report-node-conditions'
// KubectlDrainStarted...: the reason tells who drains the node, and each
// drain clears only the conditions it wrote.
const (
	// ReasonNodeDrainStarted: the declarative node drain requested the
	// eviction of the node's pods and waits for them (DrainInProgress
	// True, Drained False).
	ReasonNodeDrainStarted = "EvictionRequestNodeDrainStarted"
	// ReasonNodeDrainCompleted: no pod the declarative node drain evicts
	// is left (DrainInProgress False, Drained True).
	ReasonNodeDrainCompleted = "EvictionRequestNodeDrainCompleted"
	// ReasonNodeDrainRefused: pods the drain's policy refuses (as kubectl
	// drain refuses them) stopped the declarative node drain before it
	// changed anything (both False).
	ReasonNodeDrainRefused = "EvictionRequestNodeDrainRefused"
	// ReasonNodeDrainQueued: the declarative node drain waits for the
	// budget of nodes drained at once (both False); the message gives its
	// place in the queue.
	ReasonNodeDrainQueued = "EvictionRequestNodeDrainQueued"
	// ReasonNodeDrainFailed: the declarative node drain's deadline passed
	// with pods left and its escalation is to fail (both False); the
	// requests stay, and the drain completes if the pods leave after all.
	ReasonNodeDrainFailed = "EvictionRequestNodeDrainFailed"
	// ReasonShutdownDrainStarted and ReasonShutdownDrainCompleted are
	// those of the declarative node drain for a graceful node shutdown:
	// they differ so that the drain goes on after the kubelet is gone and
	// its conditions turn Unknown.
	ReasonShutdownDrainStarted   = "EvictionRequestShutdownDrainStarted"
	ReasonShutdownDrainCompleted = "EvictionRequestShutdownDrainCompleted"

	// ReasonPluginDrainStarted: kubectl evictionrequest drain
	// --report-node-conditions requested the evictions and waits (True,
	// False).
	ReasonPluginDrainStarted = "KubectlEvictionRequestDrainStarted"
	// ReasonPluginDrainQueued: kubectl evictionrequest drain
	// --max-concurrent-nodes drains the node in a later wave; it is
	// cordoned but its pods are not requested yet (both False).
	ReasonPluginDrainQueued = "KubectlEvictionRequestDrainQueued"
	// ReasonPluginDrainCompleted: kubectl evictionrequest drain completed
	// (False, True).
	ReasonPluginDrainCompleted = "KubectlEvictionRequestDrainCompleted"
	// ReasonPluginDrainFailed: kubectl evictionrequest drain gave up, most
	// often at its --timeout, with pods left (both False).
	ReasonPluginDrainFailed = "KubectlEvictionRequestDrainFailed"
	// ReasonPluginDrainInterrupted: kubectl evictionrequest drain was
	// interrupted (SIGINT or SIGTERM) with pods left (both False).
	ReasonPluginDrainInterrupted = "KubectlEvictionRequestDrainInterrupted"
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

// IsNodeDrainReason reports whether reason is one the declarative node
// drain writes, or wrote before this release: the conditions it may clear.
func IsNodeDrainReason(reason string) bool {
	switch reason {
	case ReasonNodeDrainStarted, ReasonNodeDrainCompleted, ReasonNodeDrainRefused, ReasonNodeDrainFailed, ReasonNodeDrainQueued,
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

// DrainConditions returns the DrainInProgress and Drained conditions of a
// drain with reason and message: DrainInProgress True while inProgress,
// Drained True once drained.
func DrainConditions(inProgress, drained bool, reason, message string) []corev1.NodeCondition {
	status := func(b bool) corev1.ConditionStatus {
		if b {
			return corev1.ConditionTrue
		}
		return corev1.ConditionFalse
	}
	return []corev1.NodeCondition{
		{Type: corev1.NodeDrainInProgress, Status: status(inProgress), Reason: reason, Message: message},
		{Type: corev1.NodeDrained, Status: status(drained), Reason: reason, Message: message},
	}
}

// SetNodeConditions writes conditions into the status of the node named
// name, by a strategic merge patch of just those conditions (the kubelet's
// and others' are left alone). node is the Node as last read, or nil: a
// condition it already has unchanged is not written again, and one whose
// status did not change keeps its transition time. It reports whether it
// wrote anything.
func SetNodeConditions(ctx context.Context, nodes corev1client.NodesGetter, name string, node *corev1.Node, now time.Time, fieldManager string, conditions ...corev1.NodeCondition) (bool, error) {
	stamp := metav1.NewTime(now)
	var changed []corev1.NodeCondition
	for _, want := range conditions {
		var have *corev1.NodeCondition
		if node != nil {
			have = FindNodeCondition(node, want.Type)
		}
		if have != nil && have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
			continue
		}
		want.LastHeartbeatTime, want.LastTransitionTime = stamp, stamp
		if have != nil && have.Status == want.Status {
			want.LastTransitionTime = have.LastTransitionTime
		}
		changed = append(changed, want)
	}
	if len(changed) == 0 {
		return false, nil
	}
	return true, patchNodeConditions(ctx, nodes, name, fieldManager, changed)
}

// RemoveNodeConditions deletes the conditions of the given types from the
// status of the node named name.
func RemoveNodeConditions(ctx context.Context, nodes corev1client.NodesGetter, name, fieldManager string, conditionTypes ...corev1.NodeConditionType) error {
	return patchNodeConditions(ctx, nodes, name, fieldManager, nil, conditionTypes...)
}

func patchNodeConditions(ctx context.Context, nodes corev1client.NodesGetter, name, fieldManager string, set []corev1.NodeCondition, remove ...corev1.NodeConditionType) error {
	conditions := make([]any, 0, len(set)+len(remove))
	for _, condition := range set {
		conditions = append(conditions, condition)
	}
	for _, t := range remove {
		conditions = append(conditions, map[string]any{"type": t, "$patch": "delete"})
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conditions}})
	if err != nil {
		return err
	}
	_, err = nodes.Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}, "status")
	return err
}

// FindNodeCondition returns the node's condition of type t, or nil.
func FindNodeCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// IsNodeConditionTrue reports whether the node's condition of type t is
// True.
func IsNodeConditionTrue(node *corev1.Node, t corev1.NodeConditionType) bool {
	c := FindNodeCondition(node, t)
	return c != nil && c.Status == corev1.ConditionTrue
}
