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

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// Reasons of the Node conditions of a drain. Those of a drain for a
// graceful shutdown differ, so that the drain goes on after the node
// lifecycle controller turns the Ready condition of the node, which is
// down, from "shutting down" to Unknown.
const (
	ReasonEvictingPods  = "EvictingPods"
	ReasonAllPodsGone   = "AllPodsGone"
	ReasonPodsRemaining = "PodsRemaining"
	// ReasonShutdownEvictingPods and ReasonShutdownAllPodsGone are the
	// reasons of DrainInProgress in a drain for a graceful shutdown.
	ReasonShutdownEvictingPods = "NodeShuttingDown"
	// ReasonDrainRefused: pods the drain's policy refuses stop it before
	// it changes anything.
	ReasonDrainRefused        = "DrainRefused"
	ReasonShutdownAllPodsGone = "AllPodsGoneBeforeShutdown"
)

// desiredConditions are the DrainInProgress and Drained conditions that
// say how far the drain of a node has come.
func desiredConditions(state nodeState, selection drain.Selection, summary drain.Summary) (inProgress, drained corev1.NodeCondition) {
	why := "the " + v1alpha1.NodeDrainAnnotation + " annotation asks for it"
	evicting, gone := ReasonEvictingPods, ReasonAllPodsGone
	if !state.marked {
		why = "the node is shutting down"
		evicting, gone = ReasonShutdownEvictingPods, ReasonShutdownAllPodsGone
	}
	skipped := ""
	if s := selection.SkippedSummary(); s != "" {
		skipped = "; skipped: " + s
	}
	inProgress = corev1.NodeCondition{Type: v1alpha1.NodeDrainInProgress}
	drained = corev1.NodeCondition{Type: v1alpha1.NodeDrained}
	if summary.Left() == 0 {
		inProgress.Status, inProgress.Reason = corev1.ConditionFalse, gone
		inProgress.Message = fmt.Sprintf("Drained because %s: no pod is left to evict%s.", why, skipped)
		drained.Status, drained.Reason, drained.Message = corev1.ConditionTrue, gone, inProgress.Message
		return inProgress, drained
	}
	inProgress.Status, inProgress.Reason = corev1.ConditionTrue, evicting
	inProgress.Message = fmt.Sprintf("Draining because %s: %s left to evict (%s)%s.", why, drain.Pods(summary.Left()), summary.Breakdown(), skipped)
	drained.Status, drained.Reason = corev1.ConditionFalse, ReasonPodsRemaining
	drained.Message = fmt.Sprintf("%s left to evict.", drain.Pods(summary.Left()))
	return inProgress, drained
}

// setConditions writes the drain's conditions to the Node's status when
// they changed, with a strategic merge patch that leaves the kubelet's
// conditions alone, and records the drain's start and end as events.
func (c *Controller) setConditions(ctx context.Context, node *corev1.Node, state nodeState, selection drain.Selection, summary drain.Summary) error {
	inProgress, drained := desiredConditions(state, selection, summary)
	if err := c.writeConditions(ctx, node, inProgress, drained); err != nil {
		return err
	}
	// The cache may not show the conditions just written yet: the phase
	// announced last is remembered, so that each start and end of a drain
	// is one event.
	phase := EventDrainStarted
	message := inProgress.Message
	if drained.Status == corev1.ConditionTrue {
		phase, message = EventDrained, drained.Message
	}
	if c.announce(node.Name, phase) {
		c.recorder.Eventf(node, corev1.EventTypeNormal, phase, "%s", message)
	}
	return nil
}

// writeConditions patches the conditions into the Node's status when they
// changed, keeping the transition time of a status that did not.
func (c *Controller) writeConditions(ctx context.Context, node *corev1.Node, conditions ...corev1.NodeCondition) error {
	now := metav1.NewTime(c.clock.Now())
	var changed []corev1.NodeCondition
	for _, want := range conditions {
		have := findCondition(node, want.Type)
		if have != nil && have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
			continue
		}
		want.LastHeartbeatTime, want.LastTransitionTime = now, now
		if have != nil && have.Status == want.Status {
			want.LastTransitionTime = have.LastTransitionTime
		}
		changed = append(changed, want)
	}
	if len(changed) == 0 {
		return nil
	}
	return c.patchConditions(ctx, node.Name, changed)
}

// refuse reports on the Node a drain that refuses some of its pods, and
// requests nothing: DrainInProgress False with the reason DrainRefused and
// a message naming the pods and the annotation that overrides each
// refusal, Drained False, and an event.
func (c *Controller) refuse(ctx context.Context, node *corev1.Node, refusal error) error {
	message := fmt.Sprintf("The drain refuses to start, and changed nothing: %s.", strings.ReplaceAll(refusal.Error(), "\n", "; "))
	inProgress := corev1.NodeCondition{Type: v1alpha1.NodeDrainInProgress, Status: corev1.ConditionFalse, Reason: ReasonDrainRefused, Message: message}
	drained := corev1.NodeCondition{Type: v1alpha1.NodeDrained, Status: corev1.ConditionFalse, Reason: ReasonDrainRefused, Message: message}
	if err := c.writeConditions(ctx, node, inProgress, drained); err != nil {
		return err
	}
	if c.announce(node.Name, EventDrainRefused+message) {
		c.recorder.Eventf(node, corev1.EventTypeWarning, EventDrainRefused, "%s", message)
	}
	return nil
}

// overrideAnnotation names the Node annotation that overrides a refusal.
func overrideAnnotation(reason drain.RefuseReason) string {
	if reason == drain.RefuseUnmanaged {
		return "annotate the node " + v1alpha1.NodeDrainForceAnnotation + "=true"
	}
	return "annotate the node " + v1alpha1.NodeDrainDeleteEmptyDirDataAnnotation + "=true"
}

// announce records phase as the last announced phase of the node's drain
// and reports whether it is new.
func (c *Controller) announce(node, phase string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.announced[node] == phase {
		return false
	}
	c.announced[node] = phase
	return true
}

// removeConditions deletes the drain's conditions from the Node's status.
func (c *Controller) removeConditions(ctx context.Context, name string) error {
	return c.patchConditions(ctx, name, nil, v1alpha1.NodeDrainInProgress, v1alpha1.NodeDrained)
}

func (c *Controller) patchConditions(ctx context.Context, name string, set []corev1.NodeCondition, remove ...corev1.NodeConditionType) error {
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
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	_, err = c.kubeClient.CoreV1().Nodes().Patch(callCtx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName}, "status")
	return err
}

func findCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}
