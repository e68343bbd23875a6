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

// Each drain through EvictionRequests writes the node lifecycle conditions
// corev1.NodeDrainInProgress and corev1.NodeDrained (KEP-5683) with
// reasons of its own, in the style of kubectl drain
// --report-node-conditions' KubectlDrainStarted...: the reason tells who
// drains the node, and each drain clears only the conditions it wrote. The
// declarative node drain's reasons are in pkg/controller/nodedrain, the
// kubectl plugin's beside its command.

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

// FindNodeCondition returns the node's first condition of type t, or nil:
// the one the kubelet, kube-controller-manager and the
// evictionrequest-node-drain policy read; any that follow are ignored.
func FindNodeCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	return FindCondition(node.Status.Conditions, t)
}

// FindCondition returns the first of conditions of type t, or nil.
func FindCondition(conditions []corev1.NodeCondition, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// IsNodeConditionTrue reports whether the node's first condition of type t
// is True.
func IsNodeConditionTrue(node *corev1.Node, t corev1.NodeConditionType) bool {
	c := FindNodeCondition(node, t)
	return c != nil && c.Status == corev1.ConditionTrue
}
