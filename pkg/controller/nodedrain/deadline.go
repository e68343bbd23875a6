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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// deadline is the deadline of the drain of node, which started at
// started: the Node's deadline annotations (drain.NodeDeadline) over the
// controller's defaults, which an annotation that does not parse leaves in
// place (with the error). A drain for a shutdown has none: the node goes
// anyway.
func (c *Controller) deadline(node *corev1.Node, state nodeState, started time.Time) (drain.Deadline, error) {
	if !state.requested() {
		return drain.Deadline{}, nil
	}
	defaults := drain.Deadline{Escalation: c.opts.OnDeadline.OrDefault()}
	if c.opts.Deadline > 0 {
		defaults.At = started.Add(c.opts.Deadline)
	}
	return drain.NodeDeadline(node.Annotations, started, defaults)
}

// drainStarted is when the drain of node started: when its session
// started, or, after a restart of the controller, the earlier transition of
// its DrainInProgress condition to True.
func drainStarted(node *corev1.Node, session *drain.Session) time.Time {
	start := session.StartTime()
	if cond := drain.FindNodeCondition(node, corev1.NodeDrainInProgress); cond != nil && cond.Status == corev1.ConditionTrue &&
		cond.Reason == ReasonDrainStarted && cond.LastTransitionTime.Time.Before(start) {
		return cond.LastTransitionTime.Time
	}
	return start
}

// keepFailed keeps a deadline that failed failed: after a restart of the
// controller the Node's EvictionRequestNodeDrainFailed condition says it
// passed, whatever a new session's start says.
func keepFailed(node *corev1.Node, d drain.Deadline) drain.Deadline {
	cond := drain.FindNodeCondition(node, corev1.NodeDrainInProgress)
	if d.IsSet() && d.Fails() && cond != nil && cond.Reason == ReasonDrainFailed && cond.LastTransitionTime.Time.Before(d.At) {
		d.At = cond.LastTransitionTime.Time
	}
	return d
}

// eventEscalated records a pod's escalation past the drain's deadline on
// the Node and on the pod's request.
func (c *Controller) eventEscalated(p drain.PodProgress) {
	message := fmt.Sprintf("Pod %s/%s: %s.", p.Namespace, p.Name, p.DescribeEscalation())
	if node, err := c.nodeLister.Get(p.Node); err == nil {
		c.recorder.Eventf(node, corev1.EventTypeWarning, EventDrainEscalated, "%s", message)
	}
	if p.Request.Request != "" {
		ref := c.drainer.Participant.API().RequestReference(p.Namespace, p.Request.Request)
		c.recorder.Eventf(ref, corev1.EventTypeWarning, EventDrainEscalated, "%s", message)
	}
}
