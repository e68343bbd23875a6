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
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// Reasons of the events on Nodes.
const (
	EventCordoned     = "DrainCordoned"
	EventUncordoned   = "DrainUncordoned"
	EventDrainStarted = "DrainStarted"
	EventDrained      = "Drained"
	EventDrainStopped = "DrainStopped"
	// EventWithdrawForbidden: the drain ended but an interceptor forbids
	// canceling the eviction of some pods; the withdrawal is retried.
	EventWithdrawForbidden = "DrainWithdrawForbidden"
	// EventEvictionBlocked: the Eviction API refuses to evict a pod of the
	// drain, most often because of a PodDisruptionBudget.
	EventEvictionBlocked = "DrainEvictionBlocked"
	// EventDrainRefused: pods the drain's policy refuses stop the drain
	// before it changes anything.
	EventDrainRefused = "DrainRefused"
	// EventDrainFailed: the drain's deadline passed with pods left and
	// its escalation is to fail.
	EventDrainFailed = "DrainFailed"
	// EventDrainEscalated: the drain's deadline passed and it evicted or
	// deleted a pod left (on the Node and on the pod's request).
	EventDrainEscalated = "DrainEscalated"
	// EventDrainDeadlineInvalid: the Node's deadline annotations do not
	// parse; the drain goes on without them.
	EventDrainDeadlineInvalid = "DrainDeadlineInvalid"
	// EventDrainHeld: nothing asks for the drain of the node any more, but
	// its maintenance is under way (MaintenanceInProgress=True): it stays
	// drained until the maintenance is over.
	EventDrainHeld = "DrainHeld"
)

// sync drains the node, or ends its drain, and returns when to look again
// even if nothing changes.
func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	node, err := c.nodeLister.Get(name)
	if apierrors.IsNotFound(err) {
		c.release(name)
		c.forget(name)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	state := c.state(node)
	switch {
	case state.wanted():
		return c.drain(ctx, node, state)
	case state.held():
		c.hold(node)
		return 0, nil
	}
	return c.undrain(ctx, node, state)
}

// hold leaves the drain of a node under maintenance as it is, and says so
// once on the Node.
func (c *Controller) hold(node *corev1.Node) {
	if c.firstReport(reportKey{node.Name, reportPhase}, EventDrainHeld) {
		c.recorder.Eventf(node, corev1.EventTypeNormal, EventDrainHeld,
			"Node %s is under maintenance (MaintenanceInProgress=True): it stays drained and cordoned until the maintenance is over.", node.Name)
	}
}

// drain cordons a marked node, requests the eviction of its pods through
// the node's drain session and reports the progress on the Node.
func (c *Controller) drain(ctx context.Context, node *corev1.Node, state nodeState) (time.Duration, error) {
	// Pods the policy refuses stop the drain before it changes anything,
	// as kubectl drain refuses them; a change of the pods or of the
	// Node's annotations looks again.
	if refusal := c.drainer.SelectOn(node.Name, state.policy).RefusedError(overrideAnnotation); refusal != nil {
		return 0, c.refuse(ctx, node, refusal)
	}
	if ok, h := c.admit(node, state); !ok {
		return waitingRecheck, c.reportWaiting(ctx, node, h)
	}
	session := c.session(node.Name)
	session.SetPolicy(state.policy)
	deadline, err := c.deadline(node, state, drainStarted(node, session))
	switch {
	case err != nil && c.firstReport(reportKey{node.Name, reportDeadlineError}, err.Error()):
		c.recorder.Eventf(node, corev1.EventTypeWarning, EventDrainDeadlineInvalid, "The Node's deadline annotations are ignored: %v.", err)
	case err == nil:
		c.firstReport(reportKey{node.Name, reportDeadlineError}, "")
	}
	session.SetDeadline(keepFailed(node, deadline))
	if state.requested() {
		callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
		cordoned, err := drain.Cordon(callCtx, c.kubeClient.CoreV1(), node, c.drainer.Participant.Name(), metav1.PatchOptions{FieldManager: ControllerName})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("cordoning node %s: %w", node.Name, err)
		}
		if cordoned {
			c.recorder.Eventf(node, corev1.EventTypeNormal, EventCordoned, "Cordoned node %s for its drain through EvictionRequests.", node.Name)
		}
	}
	report, err := session.Sync(ctx)
	if condErr := c.setConditions(ctx, node, state, report); condErr != nil {
		err = errors.Join(err, condErr)
	}
	if report.Summary.Left() == 0 && err == nil {
		c.complete(node.Name)
	}
	return report.RetryIn, err
}

// undrain withdraws from the requests of the node's pods that are not
// complete and uncordons the node if the drain cordoned it.
func (c *Controller) undrain(ctx context.Context, node *corev1.Node, state nodeState) (time.Duration, error) {
	// After a restart there is no session: a new one withdraws from the
	// requests of the pods on the node.
	withdrawal := c.session(node.Name).Withdraw(ctx)
	if withdrawal.Withdrawn > 0 {
		klog.FromContext(ctx).V(2).Info("Withdrew from the EvictionRequests of the node's pods", "count", withdrawal.Withdrawn)
	}
	if len(withdrawal.Errors) > 0 {
		return 0, fmt.Errorf("withdrawing from the EvictionRequests of the pods of node %s: %w", node.Name, errors.Join(withdrawal.Errors...))
	}
	if withdrawal.Forbidden > 0 {
		c.recorder.Eventf(node, corev1.EventTypeWarning, EventWithdrawForbidden,
			"The drain of node %s ended, but the interceptors of %d pods forbid canceling their eviction; retrying in %s.", node.Name, withdrawal.Forbidden, forbiddenRetry)
		return forbiddenRetry, nil
	}
	requester := c.drainer.Participant.Name()
	if state.cordonedBy == requester {
		callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
		uncordoned, err := drain.Uncordon(callCtx, c.kubeClient.CoreV1(), node, requester, metav1.PatchOptions{FieldManager: ControllerName})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("uncordoning node %s: %w", node.Name, err)
		}
		if uncordoned && node.Spec.Unschedulable {
			c.recorder.Eventf(node, corev1.EventTypeNormal, EventUncordoned, "Uncordoned node %s, which its drain had cordoned.", node.Name)
		}
	}
	// Forgotten first: the release outlives it until the cache shows the
	// conditions gone.
	c.forget(node.Name)
	c.release(node.Name)
	if state.conditions {
		if err := c.removeConditions(ctx, node.Name); err != nil {
			return 0, err
		}
		c.recorder.Eventf(node, corev1.EventTypeNormal, EventDrainStopped,
			"Node %s is no longer to be drained; withdrew from the EvictionRequests of %s that were not complete.", node.Name, drain.Pods(withdrawal.Withdrawn))
	}
	return 0, nil
}

// session is the drain session of a node, started on first use.
func (c *Controller) session(node string) *drain.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[node]
	if !ok {
		s = c.drainer.NewSession(node)
		c.sessions[node] = s
	}
	return s
}

// forget drops what the controller remembers of the drain of a node: its
// session and what its events reported last.
func (c *Controller) forget(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, node)
	delete(c.released, node)
	delete(c.completed, node)
	delete(c.lastReported, reportKey{node, reportPhase})
	delete(c.lastReported, reportKey{node, reportDeadlineError})
}

// eventBlocked records on the Node that the eviction of one of its pods is
// refused, once per change of what refuses it.
func (c *Controller) eventBlocked(p drain.PodProgress) {
	node, err := c.nodeLister.Get(p.Node)
	if err != nil {
		return
	}
	c.recorder.Eventf(node, corev1.EventTypeWarning, EventEvictionBlocked, "Pod %s/%s: %s.", p.Namespace, p.Name, p.Blocker(c.clock.Now()))
}
