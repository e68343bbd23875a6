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
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// The node drain acts, with its own rights, on what a Node's conditions
// say: a graceful shutdown (isShuttingDown) and a drain asked for by
// MaintenancePlanned (isMaintenancePlanned). The chart's
// ValidatingAdmissionPolicy evictionrequest-node-drain lets only the
// node's kubelet report the one and only holders of the drain's rights
// ask for the other; it protects the drain only if it reads a Node as the
// drain does. So there is one rule, written here and, in CEL, in the
// policy's template (charts/evictionrequest/templates/node-drain-policy.yaml),
// and the unit tests hold both to one table of hostile conditions
// (nodereading_cases_test.go), the policy admitted through kube-apiserver's
// own admission plugin:
//
//   - Only the first maxReadConditions conditions are read. The policy
//     fails open (failurePolicy Ignore: nothing may stop a kubelet's status
//     updates), and kube-apiserver fails a CEL evaluation that exceeds its
//     cost budget: a rule whose cost grew with the Node would let a writer
//     pad a Node until the policy gave up and admitted it.
//   - A condition type is read from its first condition, as the kubelet,
//     kube-controller-manager and kubectl read it; what follows is
//     ignored. Refusing duplicates instead would leave the drain a rule to
//     pick for the Nodes that hold them already (written while the policy
//     was off, or admitted on an evaluation error), and would fail the
//     status updates of their kubelets.
//   - Strings are compared byte for byte, never folded: the kubelet writes
//     the lower-case "node is shutting down" in Ready's message (alone,
//     among its other errors in brackets, or before a warning), and
//     nothing of ours or of the kubelet's matches in another case. Folding
//     is where Go and CEL part (Go's strings.ToLower turns U+0130 and
//     U+212A into ASCII letters, CEL's lowerAscii does not), and every
//     spelling a rule accepts beyond the kubelet's is one a writer
//     chooses. The phrase in Ready's reason, where the kubelet never
//     writes it, is not read either.
//   - Statuses are the API's exact "True", "False" and "Unknown"; a
//     missing status or reason reads as the empty string.

// maxReadConditions is how many of a Node's conditions, from the first,
// the rule reads: far more than a node carries (the kubelet's five, a node
// problem detector's, Kubernetes 1.37's lifecycle conditions), few enough
// that the policy reads them within a small part of its budget.
const maxReadConditions = 64

// shutdownMessage is what the kubelet's Ready condition says, in its
// message, while a graceful node shutdown is under way (its node shutdown
// manager's error, in k8s.io/kubernetes/pkg/kubelet/nodeshutdown).
const shutdownMessage = "node is shutting down"

// readCondition returns the node's first condition of type t among those
// the rule reads, or nil.
func readCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	conditions := node.Status.Conditions
	if len(conditions) > maxReadConditions {
		conditions = conditions[:maxReadConditions]
	}
	return drain.FindCondition(conditions, t)
}

// isShuttingDown is true while the node reports a graceful node shutdown.
// Its GracefulNodeShutdownInProgress condition (Kubernetes 1.37, KEP-5683)
// says so when it is True or False. Without it, the kubelet's Ready
// condition is the fallback: not True, and saying the node is shutting
// down (https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/);
// a node whose drain for a shutdown started then stays so until it is
// Ready again, because once the kubelet is gone the node lifecycle
// controller turns its Ready condition to Unknown.
func isShuttingDown(node *corev1.Node) bool {
	if c := readCondition(node, corev1.NodeGracefulNodeShutdownInProgress); c != nil && c.Status != corev1.ConditionUnknown {
		return c.Status == corev1.ConditionTrue
	}
	ready := readCondition(node, corev1.NodeReady)
	if ready == nil || ready.Status == corev1.ConditionTrue {
		return false
	}
	if strings.Contains(ready.Message, shutdownMessage) {
		return true
	}
	inProgress := readCondition(node, corev1.NodeDrainInProgress)
	return inProgress != nil && IsShutdownDrainReason(inProgress.Reason)
}

// isMaintenancePlanned is true while the node's MaintenancePlanned
// condition (Kubernetes 1.37, KEP-5683) is True: a maintenance tool asks
// for the drain of the node.
func isMaintenancePlanned(node *corev1.Node) bool {
	return isConditionTrue(node, corev1.NodeMaintenancePlanned)
}

// isConditionTrue reports whether the node's condition of type t, as the
// rule reads it, is True.
func isConditionTrue(node *corev1.Node, t corev1.NodeConditionType) bool {
	c := readCondition(node, t)
	return c != nil && c.Status == corev1.ConditionTrue
}
