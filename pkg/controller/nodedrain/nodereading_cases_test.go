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

	corev1 "k8s.io/api/core/v1"
)

// nodeReadingCase is a Node's conditions, most of them hostile, with how
// the one rule reads them: whether the node reports a graceful shutdown,
// and whether its MaintenancePlanned condition asks for a drain. Both the
// node drain and the evictionrequest-node-drain policy must read them so.
type nodeReadingCase struct {
	name        string
	conditions  []corev1.NodeCondition
	shutdown    bool
	maintenance bool
}

func condition(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
	return corev1.NodeCondition{Type: t, Status: status, Reason: reason, Message: message}
}

// ready is the Ready condition of a kubelet with nothing to report.
var ready = condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")

// notReady is the kubelet's Ready condition with message: its errors,
// joined.
func notReady(message string) corev1.NodeCondition {
	return condition(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", message)
}

// kubeletShutdown is the kubelet's Ready condition during a graceful
// shutdown.
var kubeletShutdown = notReady("node is shutting down")

// lost is Ready as the node lifecycle controller leaves it once the kubelet
// is gone.
var lost = condition(corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.")

func gracefulShutdown(status corev1.ConditionStatus) corev1.NodeCondition {
	return condition(corev1.NodeGracefulNodeShutdownInProgress, status, "", "")
}

func maintenancePlanned(status corev1.ConditionStatus) corev1.NodeCondition {
	return condition(corev1.NodeMaintenancePlanned, status, "MaintenanceWindow", "")
}

func drainInProgress(reason string) corev1.NodeCondition {
	return condition(corev1.NodeDrainInProgress, corev1.ConditionTrue, reason, "Draining because the node is shutting down: 1 pod left to evict.")
}

func conditions(cs ...corev1.NodeCondition) []corev1.NodeCondition { return cs }

// after is cs after n conditions of no type the rule reads.
func after(n int, cs ...corev1.NodeCondition) []corev1.NodeCondition {
	var padded []corev1.NodeCondition
	for i := range n {
		padded = append(padded, condition(corev1.NodeConditionType(fmt.Sprintf("Example%d", i)), corev1.ConditionFalse, "", ""))
	}
	return append(padded, cs...)
}

// nodeReadingCases is the one table of the conditions a writer may choose,
// read by the node drain (TestTheNodeDrainReadsNodeConditionsByTheOneRule)
// and by the policy (TestThePolicyReadsNodeConditionsAsTheNodeDrain).
var nodeReadingCases = []nodeReadingCase{
	{name: "a Ready node", conditions: conditions(ready)},
	{name: "no conditions", conditions: nil},

	// The first 64 conditions are read.
	{name: "the kubelet's shutdown as the 64th condition", conditions: after(63, kubeletShutdown), shutdown: true},
	{name: "the kubelet's shutdown as the 65th condition", conditions: after(64, kubeletShutdown)},
	{name: "GracefulNodeShutdownInProgress True as the 64th condition", conditions: after(63, gracefulShutdown(corev1.ConditionTrue)), shutdown: true},
	{name: "GracefulNodeShutdownInProgress True as the 65th condition", conditions: after(64, gracefulShutdown(corev1.ConditionTrue))},
	{name: "MaintenancePlanned True as the 64th condition", conditions: after(63, maintenancePlanned(corev1.ConditionTrue)), maintenance: true},
	{name: "MaintenancePlanned True as the 65th condition", conditions: after(64, maintenancePlanned(corev1.ConditionTrue))},
	{name: "a node lost during its shutdown drain, its DrainInProgress as the 65th condition",
		conditions: append(conditions(lost), after(63, drainInProgress(ReasonShutdownDrainStarted))...)},

	// The kubelet's Ready condition: its message holds exactly "node is
	// shutting down", alone or among its other errors.
	{name: "the kubelet's shutdown", conditions: conditions(kubeletShutdown), shutdown: true},
	{name: "the kubelet's shutdown among other errors", conditions: conditions(notReady("[container runtime is down, node is shutting down]")), shutdown: true},
	{name: "the kubelet's shutdown with a warning", conditions: conditions(notReady("node is shutting down. WARNING: cpu hardcapping unsupported")), shutdown: true},
	{name: "the message with spaces around", conditions: conditions(notReady(" node is shutting down ")), shutdown: true},
	{name: "Ready Unknown saying it", conditions: conditions(condition(corev1.NodeReady, corev1.ConditionUnknown, "", "node is shutting down")), shutdown: true},
	{name: "Ready without a status saying it", conditions: conditions(condition(corev1.NodeReady, "", "", "node is shutting down")), shutdown: true},
	{name: "Ready with status false, lower case, saying it", conditions: conditions(condition(corev1.NodeReady, "false", "", "node is shutting down")), shutdown: true},
	{name: "Ready True saying it", conditions: conditions(condition(corev1.NodeReady, corev1.ConditionTrue, "", "node is shutting down"))},
	{name: "Ready with status true, lower case, saying it", conditions: conditions(condition(corev1.NodeReady, "true", "", "node is shutting down")), shutdown: true},

	// Look-alikes of the message: only its exact bytes say it.
	{name: "capital I with a dot (U+0130)", conditions: conditions(notReady("node \u0130s shutting down"))},
	{name: "dotless i (U+0131)", conditions: conditions(notReady("node \u0131s shutting down"))},
	{name: "long s (U+017F), which Unicode folds to s", conditions: conditions(notReady("node i\u017F shutting down"))},
	{name: "Kelvin sign (U+212A) and capitals", conditions: conditions(notReady("NODE IS SHUTTING DOWN \u212A"))},
	{name: "Cyrillic o (U+043E)", conditions: conditions(notReady("node is shutting d\u043Ewn"))},
	{name: "fullwidth n (U+FF4E)", conditions: conditions(notReady("\uFF4Eode is shutting down"))},
	{name: "a zero-width space (U+200B)", conditions: conditions(notReady("node is\u200B shutting down"))},
	{name: "a no-break space (U+00A0)", conditions: conditions(notReady("node is\u00A0shutting down"))},
	{name: "two spaces", conditions: conditions(notReady("node is  shutting down"))},
	{name: "capitalized", conditions: conditions(notReady("Node is shutting down"))},
	{name: "capitals", conditions: conditions(notReady("NODE IS SHUTTING DOWN"))},
	{name: "in the reason only", conditions: conditions(condition(corev1.NodeReady, corev1.ConditionFalse, "node is shutting down", ""))},
	{name: "Ready False without a message or reason", conditions: conditions(condition(corev1.NodeReady, corev1.ConditionFalse, "", ""))},
	{name: "a type ready in lower case saying it", conditions: conditions(condition("ready", corev1.ConditionFalse, "", "node is shutting down"))},
	{name: "a type Ready with a trailing space saying it", conditions: conditions(condition("Ready ", corev1.ConditionFalse, "", "node is shutting down"))},

	// Two Ready conditions: the first is the node's.
	{name: "Ready True then Ready saying it", conditions: conditions(ready, kubeletShutdown)},
	{name: "Ready saying it then Ready True", conditions: conditions(kubeletShutdown, ready), shutdown: true},

	// GracefulNodeShutdownInProgress, True or False, says it; Unknown
	// leaves it to Ready.
	{name: "GracefulNodeShutdownInProgress True", conditions: conditions(ready, gracefulShutdown(corev1.ConditionTrue)), shutdown: true},
	{name: "GracefulNodeShutdownInProgress False over Ready saying it", conditions: conditions(kubeletShutdown, gracefulShutdown(corev1.ConditionFalse))},
	{name: "GracefulNodeShutdownInProgress Unknown", conditions: conditions(ready, gracefulShutdown(corev1.ConditionUnknown))},
	{name: "GracefulNodeShutdownInProgress Unknown over Ready saying it", conditions: conditions(kubeletShutdown, gracefulShutdown(corev1.ConditionUnknown)), shutdown: true},
	{name: "GracefulNodeShutdownInProgress without a status over Ready saying it", conditions: conditions(kubeletShutdown, gracefulShutdown(""))},
	{name: "GracefulNodeShutdownInProgress with status true, lower case", conditions: conditions(ready, gracefulShutdown("true"))},
	{name: "a type GracefulNodeShutdownInProgress with a trailing space, True", conditions: conditions(ready, condition("GracefulNodeShutdownInProgress ", corev1.ConditionTrue, "", ""))},

	// Two GracefulNodeShutdownInProgress conditions: the first is the
	// node's, in each order.
	{name: "GracefulNodeShutdownInProgress Unknown then False, over Ready saying it",
		conditions: conditions(gracefulShutdown(corev1.ConditionUnknown), gracefulShutdown(corev1.ConditionFalse), kubeletShutdown), shutdown: true},
	{name: "GracefulNodeShutdownInProgress False then Unknown, over Ready saying it",
		conditions: conditions(gracefulShutdown(corev1.ConditionFalse), gracefulShutdown(corev1.ConditionUnknown), kubeletShutdown)},
	{name: "GracefulNodeShutdownInProgress Unknown then True", conditions: conditions(ready, gracefulShutdown(corev1.ConditionUnknown), gracefulShutdown(corev1.ConditionTrue))},
	{name: "GracefulNodeShutdownInProgress True then Unknown", conditions: conditions(ready, gracefulShutdown(corev1.ConditionTrue), gracefulShutdown(corev1.ConditionUnknown)), shutdown: true},
	{name: "GracefulNodeShutdownInProgress False then True", conditions: conditions(ready, gracefulShutdown(corev1.ConditionFalse), gracefulShutdown(corev1.ConditionTrue))},
	{name: "GracefulNodeShutdownInProgress True then False", conditions: conditions(ready, gracefulShutdown(corev1.ConditionTrue), gracefulShutdown(corev1.ConditionFalse)), shutdown: true},

	// A drain for a shutdown goes on once the kubelet is gone: Ready not
	// True and the first DrainInProgress of a shutdown drain's reason.
	{name: "a node lost during its shutdown drain", conditions: conditions(lost, drainInProgress(ReasonShutdownDrainStarted)), shutdown: true},
	{name: "a node lost after its shutdown drain", conditions: conditions(lost, drainInProgress(ReasonShutdownDrainCompleted)), shutdown: true},
	{name: "a node lost during its shutdown drain of the last release", conditions: conditions(lost, drainInProgress(legacyReasonShutdownEvicting)), shutdown: true},
	{name: "a node lost during another drain", conditions: conditions(lost, drainInProgress(ReasonDrainStarted))},
	{name: "no Ready, with a shutdown drain's condition", conditions: conditions(drainInProgress(ReasonShutdownDrainStarted))},
	{name: "a Ready node with a shutdown drain's condition", conditions: conditions(ready, drainInProgress(ReasonShutdownDrainStarted))},
	{name: "a shutdown drain's reason in lower case", conditions: conditions(lost, drainInProgress("evictionrequestshutdowndrainstarted"))},
	{name: "a shutdown drain's reason with a trailing space", conditions: conditions(lost, drainInProgress(ReasonShutdownDrainStarted+" "))},
	{name: "another drain's DrainInProgress then a shutdown drain's", conditions: conditions(lost, drainInProgress(ReasonDrainStarted), drainInProgress(ReasonShutdownDrainStarted))},
	{name: "a shutdown drain's DrainInProgress then another drain's", conditions: conditions(lost, drainInProgress(ReasonShutdownDrainStarted), drainInProgress(ReasonDrainStarted)), shutdown: true},

	// MaintenancePlanned asks for a drain while its first is True.
	{name: "MaintenancePlanned True", conditions: conditions(ready, maintenancePlanned(corev1.ConditionTrue)), maintenance: true},
	{name: "MaintenancePlanned False", conditions: conditions(ready, maintenancePlanned(corev1.ConditionFalse))},
	{name: "MaintenancePlanned Unknown", conditions: conditions(ready, maintenancePlanned(corev1.ConditionUnknown))},
	{name: "MaintenancePlanned without a status", conditions: conditions(ready, maintenancePlanned(""))},
	{name: "MaintenancePlanned with status true, lower case", conditions: conditions(ready, maintenancePlanned("true"))},
	{name: "a type maintenancePlanned in lower case, True", conditions: conditions(ready, condition("maintenancePlanned", corev1.ConditionTrue, "", ""))},
	{name: "MaintenancePlanned False then True", conditions: conditions(ready, maintenancePlanned(corev1.ConditionFalse), maintenancePlanned(corev1.ConditionTrue))},
	{name: "MaintenancePlanned True then False", conditions: conditions(ready, maintenancePlanned(corev1.ConditionTrue), maintenancePlanned(corev1.ConditionFalse)), maintenance: true},
	{name: "MaintenancePlanned True during the kubelet's shutdown", conditions: conditions(kubeletShutdown, maintenancePlanned(corev1.ConditionTrue)), shutdown: true, maintenance: true},
}
