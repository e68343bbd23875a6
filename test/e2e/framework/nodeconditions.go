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

package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// SetNodeCondition writes a condition into node's status, as a kubelet, an
// admin or a maintenance tool would: a strategic merge patch of that
// condition alone, which kwok's status updates leave alone.
func (f *Framework) SetNodeCondition(t testing.TB, node string, ct corev1.NodeConditionType, status corev1.ConditionStatus, reason string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	condition := corev1.NodeCondition{Type: ct, Status: status, Reason: reason}
	if _, err := drain.SetNodeConditions(ctx, f.Kube.CoreV1(), node, nil, time.Now(), "e2e-admin", condition); err != nil {
		t.Fatalf("setting %s=%s on node %s: %v", ct, status, node, err)
	}
}

// SetNodeConditionAsKubelet sets the condition ct of node as its kubelet
// writes it, as system:node:<node>: only the node itself (or
// kube-controller-manager) may report a graceful shutdown
// (the evictionrequest-node-drain policy).
func (f *Framework) SetNodeConditionAsKubelet(t testing.TB, node string, ct corev1.NodeConditionType, status corev1.ConditionStatus, reason string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	kubelet, err := kubernetes.NewForConfig(f.ImpersonatingConfig("system:node:"+node, "system:nodes", "system:authenticated"))
	if err != nil {
		t.Fatal(err)
	}
	condition := corev1.NodeCondition{Type: ct, Status: status, Reason: reason}
	if _, err := drain.SetNodeConditions(ctx, kubelet.CoreV1(), node, nil, time.Now(), "kubelet", condition); err != nil {
		t.Fatalf("setting %s=%s on node %s as its kubelet: %v", ct, status, node, err)
	}
}

// NodeConditionIs is a condition on a Node: its condition ct has status,
// reason and a message containing message.
func NodeConditionIs(ct corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) func(*corev1.Node) error {
	return func(n *corev1.Node) error {
		c := drain.FindNodeCondition(n, ct)
		if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, message) {
			return fmt.Errorf("%s = %+v, want %s with reason %s and %q", ct, c, status, reason, message)
		}
		return nil
	}
}

// noDrainConditions is a condition on a Node: the drain's conditions are
// gone and the node is schedulable.
func noDrainConditions(n *corev1.Node) error {
	if n.Spec.Unschedulable || drain.FindNodeCondition(n, corev1.NodeDrainInProgress) != nil || drain.FindNodeCondition(n, corev1.NodeDrained) != nil {
		return fmt.Errorf("unschedulable %v, conditions %+v", n.Spec.Unschedulable, n.Status.Conditions)
	}
	return nil
}

// CheckMaintenancePlannedDrain checks, on the API of the suite, that a node
// a maintenance tool marks MaintenancePlanned=True (Kubernetes 1.37) is
// cordoned and drained by the declarative node drain, which ends with
// Drained=True; that MaintenancePlanned=False ends the drain (uncordoned,
// its conditions gone). The node drain runs with
// --drain-on-maintenance-planned.
func (f *Framework) CheckMaintenancePlannedDrain(t *testing.T) {
	t.Helper()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "web-0", PodOptions{Node: node})
	// The suite's pods declare no controller: the drain may evict them.
	f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{nodedrain.ForceAnnotation: "true"}}})

	f.SetNodeCondition(t, node, corev1.NodeMaintenancePlanned, corev1.ConditionTrue, "MaintenanceWindow")
	f.WaitForPodGone(t, ns, pod.Name)
	drained := f.WaitForNode(t, node, "Drained=True", NodeConditionIs(corev1.NodeDrained, corev1.ConditionTrue, nodedrain.ReasonDrainCompleted, "its MaintenancePlanned condition is True"))
	if !drained.Spec.Unschedulable {
		t.Error("the drained node is not cordoned")
	}
	if err := NodeConditionIs(corev1.NodeDrainInProgress, corev1.ConditionFalse, nodedrain.ReasonDrainCompleted, "")(drained); err != nil {
		t.Error(err)
	}

	f.SetNodeCondition(t, node, corev1.NodeMaintenancePlanned, corev1.ConditionFalse, "MaintenanceCompleted")
	f.WaitForNode(t, node, "the drain to end", noDrainConditions)
}

// CheckGracefulShutdownConditionDrain checks, on the API of the suite, that
// a node whose GracefulNodeShutdownInProgress condition (Kubernetes 1.37)
// turns True gets its pods' evictions requested by the node drain,
// nodeDrain, without a cordon (a PodDisruptionBudget keeps the pod), and
// that False withdraws them: the pod stays, the drain's conditions go.
func (f *Framework) CheckGracefulShutdownConditionDrain(t *testing.T, nodeDrain participant.Participant) {
	t.Helper()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "db-0", PodOptions{Node: node, Labels: map[string]string{"app": "db"}})
	f.CreatePDB(t, ns, "db", 1, 1)

	f.SetNodeConditionAsKubelet(t, node, corev1.NodeGracefulNodeShutdownInProgress, corev1.ConditionTrue, "NodeShutdown")
	n := f.WaitForNode(t, node, "the drain for the shutdown", NodeConditionIs(corev1.NodeDrainInProgress, corev1.ConditionTrue, nodedrain.ReasonShutdownDrainStarted, "1 pod left to evict"))
	if n.Spec.Unschedulable {
		t.Error("the drain cordoned a node that shuts down")
	}
	f.waitForDrainRequest(t, nodeDrain, ns, pod.UID, true)

	f.SetNodeConditionAsKubelet(t, node, corev1.NodeGracefulNodeShutdownInProgress, corev1.ConditionFalse, "")
	f.WaitForNode(t, node, "the drain to end", noDrainConditions)
	f.waitForDrainRequest(t, nodeDrain, ns, pod.UID, false)
	if _, err := f.Kube.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("pod %s after the shutdown was called off: %v", pod.Name, err)
	}
}

// waitForDrainRequest waits until nodeDrain requests the eviction of the
// pod with uid, or no longer does.
func (f *Framework) waitForDrainRequest(t *testing.T, nodeDrain participant.Participant, ns string, uid types.UID, requested bool) {
	t.Helper()
	Eventually(t, DefaultTimeout, fmt.Sprintf("%s requesting the pod's eviction: %v", nodeDrain.Name(), requested), func(ctx context.Context) error {
		status, err := nodeDrain.Status(ctx, ns, uid)
		if err != nil {
			return err
		}
		if status.Requested != requested {
			return fmt.Errorf("%+v", status)
		}
		return nil
	})
}

// CheckDeclarativeDrainDeadline checks, on the API of the suite, that the
// declarative drain of a node annotated with a deadline and delete, whose
// pod a PodDisruptionBudget keeps, deletes the pod at the deadline, says so
// in a DrainEscalated event on the Node, and ends Drained. The deadline
// leaves time to see it on the Node first.
func (f *Framework) CheckDeclarativeDrainDeadline(t *testing.T) {
	t.Helper()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "db-0", PodOptions{Node: node, Labels: map[string]string{"app": "db"}})
	f.CreatePDB(t, ns, "db", 1, 1)

	f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		drain.DeadlineAnnotation: "15s", drain.OnDeadlineAnnotation: string(drain.EscalateDelete)}}})
	f.MarkForDrain(t, node, true)
	f.WaitForNode(t, node, "the deadline on the node", NodeConditionIs(corev1.NodeDrainInProgress, corev1.ConditionTrue, nodedrain.ReasonDrainStarted, ", then delete."))
	f.WaitForPodGone(t, ns, pod.Name)
	f.WaitForNode(t, node, "Drained=True", NodeConditionIs(corev1.NodeDrained, corev1.ConditionTrue, nodedrain.ReasonDrainCompleted, ""))
	f.WaitForEvents(t, "", "Node", node, nodedrain.EventDrainEscalated)
	f.MarkForDrain(t, node, false)
	f.WaitForNode(t, node, "the drain to end", noDrainConditions)
}

// CheckDeclarativeDrainCalledOffRemovesItsDeadline checks, on the API of
// the suite, that a declarative drain with a deadline, called off before
// it (the drain annotation removed), withdraws nodeDrain from the request
// it announced the deadline on and removes the deadline from it: no
// interceptor reads a deadline nobody holds. A PodDisruptionBudget keeps
// the pod meanwhile.
func (f *Framework) CheckDeclarativeDrainCalledOffRemovesItsDeadline(t *testing.T, nodeDrain participant.Participant) {
	t.Helper()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "db-0", PodOptions{Node: node, Labels: map[string]string{"app": "db"}})
	f.CreatePDB(t, ns, "db", 1, 1)
	f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		drain.DeadlineAnnotation: "30m", drain.OnDeadlineAnnotation: string(drain.EscalateFail)}}})
	f.MarkForDrain(t, node, true)
	f.waitForRequestDeadline(t, nodeDrain, ns, pod.UID, true)

	f.MarkForDrain(t, node, false)
	f.WaitForNode(t, node, "the drain to end", noDrainConditions)
	f.waitForDrainRequest(t, nodeDrain, ns, pod.UID, false)
	f.waitForRequestDeadline(t, nodeDrain, ns, pod.UID, false)
}

// waitForRequestDeadline waits until nodeDrain's request for the pod with
// uid carries a drain's deadline, or no longer does.
func (f *Framework) waitForRequestDeadline(t *testing.T, nodeDrain participant.Participant, ns string, uid types.UID, announced bool) {
	t.Helper()
	Eventually(t, DefaultTimeout, fmt.Sprintf("the deadline on %s's request: %v", nodeDrain.Name(), announced), func(ctx context.Context) error {
		status, err := nodeDrain.Status(ctx, ns, uid)
		if err != nil {
			return err
		}
		if _, ok := drain.RequestDeadline(status.Annotations); ok != announced {
			return fmt.Errorf("annotations %v", status.Annotations)
		}
		return nil
	})
}
