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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// desiredConditions are the DrainInProgress and Drained conditions that
// say how far the drain of a node has come, why it drains, and its
// deadline: an absolute time, so that the message does not change, and
// cost a write, every second.
func desiredConditions(state nodeState, selection drain.Selection, report drain.Report, now time.Time) []corev1.NodeCondition {
	summary := report.Summary
	why := "the " + DrainAnnotation + " annotation asks for it"
	started, completed := ReasonDrainStarted, ReasonDrainCompleted
	switch {
	case state.marked:
	case state.maintenance:
		why = "its " + string(corev1.NodeMaintenancePlanned) + " condition is True"
	default:
		why = "the node is shutting down"
		started, completed = ReasonShutdownDrainStarted, ReasonShutdownDrainCompleted
	}
	skipped := ""
	if s := selection.SkippedSummary(); s != "" {
		skipped = "; skipped: " + s
	}
	if summary.Left() == 0 {
		return drain.DrainConditions(false, true, completed, fmt.Sprintf("Drained because %s: no pod is left to evict%s.", why, skipped))
	}
	left := fmt.Sprintf("%s left to evict (%s)%s", drain.Pods(summary.Left()), summary.Breakdown(), skipped)
	deadline := report.Deadline
	if deadline.FailedAt(now) {
		return drain.DrainConditions(false, false, ReasonDrainFailed,
			fmt.Sprintf("The drain's deadline %s passed with %s; the requests stay.", deadline.At.UTC().Format(time.RFC3339), left))
	}
	message := fmt.Sprintf("Draining because %s: %s.", why, left)
	if deadline.IsSet() {
		message += fmt.Sprintf(" Deadline %s, then %s.", deadline.At.UTC().Format(time.RFC3339), deadline.Escalation)
	}
	return drain.DrainConditions(true, false, started, message)
}

// setConditions writes the drain's conditions to the Node's status when
// they changed, with a strategic merge patch that leaves the kubelet's
// conditions alone, and records the drain's start and end as events.
func (c *Controller) setConditions(ctx context.Context, node *corev1.Node, state nodeState, report drain.Report) error {
	conditions := desiredConditions(state, report.Selections[node.Name], report, c.clock.Now())
	if err := c.writeConditions(ctx, node, conditions); err != nil {
		return err
	}
	// The cache may not show the conditions just written yet: the phase
	// reported last is remembered, so that each start and end of a drain
	// is one event.
	phase, eventType, message := EventDrainStarted, corev1.EventTypeNormal, conditions[0].Message
	switch {
	case conditions[1].Status == corev1.ConditionTrue:
		phase = EventDrained
	case conditions[0].Reason == ReasonDrainFailed:
		phase, eventType = EventDrainFailed, corev1.EventTypeWarning
	}
	if c.firstReport(reportKey{node.Name, reportPhase}, phase) {
		c.recorder.Eventf(node, eventType, phase, "%s", message)
	}
	return nil
}

// writeConditions writes the conditions into the Node's status when they
// changed.
func (c *Controller) writeConditions(ctx context.Context, node *corev1.Node, conditions []corev1.NodeCondition) error {
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	_, err := drain.SetNodeConditions(callCtx, c.kubeClient.CoreV1(), node.Name, node, c.clock.Now(), ControllerName, conditions...)
	return err
}

// refuse reports on the Node a drain that refuses some of its pods, and
// requests nothing: DrainInProgress False with the reason DrainRefused and
// a message naming the pods and the annotation that overrides each
// refusal, Drained False, and an event.
func (c *Controller) refuse(ctx context.Context, node *corev1.Node, refusal error) error {
	message := fmt.Sprintf("The drain refuses to start, and changed nothing: %s.", strings.ReplaceAll(refusal.Error(), "\n", "; "))
	if err := c.writeConditions(ctx, node, drain.DrainConditions(false, false, ReasonDrainRefused, message)); err != nil {
		return err
	}
	if c.firstReport(reportKey{node.Name, reportPhase}, EventDrainRefused+message) {
		c.recorder.Eventf(node, corev1.EventTypeWarning, EventDrainRefused, "%s", message)
	}
	return nil
}

// overrideAnnotation names the Node annotation that overrides a refusal.
func overrideAnnotation(reason drain.RefuseReason) string {
	if reason == drain.RefuseUnmanaged {
		return "annotate the node " + ForceAnnotation + "=true"
	}
	return "annotate the node " + DeleteEmptyDirDataAnnotation + "=true"
}

// reportKey names what an event reports of the drain of a node: its phase
// (started, drained, failed, refused) or its deadline annotations' error.
type reportKey struct {
	node  string
	topic reportTopic
}

// reportTopic is what an event of a node's drain reports.
type reportTopic int

const (
	reportPhase reportTopic = iota
	reportDeadlineError
)

// firstReport records value as what the events of key last reported and
// says whether it is new: each change is one event.
func (c *Controller) firstReport(key reportKey, value string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastReported[key] == value {
		return false
	}
	c.lastReported[key] = value
	return true
}

// removeConditions deletes the drain's conditions from the Node's status.
func (c *Controller) removeConditions(ctx context.Context, name string) error {
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	return drain.RemoveNodeConditions(callCtx, c.kubeClient.CoreV1(), name, ControllerName, corev1.NodeDrainInProgress, corev1.NodeDrained)
}
