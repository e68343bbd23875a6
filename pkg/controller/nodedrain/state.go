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
	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// nodeState is what the drain reads of a Node; a Node update that leaves it
// unchanged needs no sync.
type nodeState struct {
	// marked: the node carries DrainAnnotation=true.
	marked bool
	// maintenance: the node's MaintenancePlanned condition is True and the
	// controller drains for it (Options.DrainOnMaintenancePlanned).
	maintenance bool
	// maintenanceInProgress: the node's MaintenanceInProgress condition is
	// True, its maintenance is under way (held).
	maintenanceInProgress bool
	// shuttingDown: the node reports a graceful node shutdown.
	shuttingDown  bool
	unschedulable bool
	cordonedBy    string
	// conditions: the node carries a condition this drain wrote (its
	// reasons); inProgress and drained are their status and message, so
	// that a status update that erased or changed them is noticed.
	conditions          bool
	inProgress, drained string
	// deadline and onDeadline are the Node's deadline annotations, read
	// by Controller.deadline.
	deadline, onDeadline string
	// policy is what the drain evicts beyond kubectl drain's defaults: the
	// Node's override annotations, or everything for a shutdown, which
	// takes every pod down anyway.
	policy drain.Policy
}

// drainState reads node; onMaintenance is whether the node's
// MaintenancePlanned condition asks for a drain.
func drainState(node *corev1.Node, onMaintenance bool) nodeState {
	s := nodeState{
		marked:                node.Annotations[DrainAnnotation] == "true",
		maintenance:           onMaintenance && isMaintenancePlanned(node),
		maintenanceInProgress: isConditionTrue(node, corev1.NodeMaintenanceInProgress),
		shuttingDown:          isShuttingDown(node),
		unschedulable:         node.Spec.Unschedulable,
		cordonedBy:            node.Annotations[drain.CordonedByAnnotation],
		deadline:              node.Annotations[drain.DeadlineAnnotation],
		onDeadline:            node.Annotations[drain.OnDeadlineAnnotation],
	}
	s.policy = drain.Policy{
		Force:              node.Annotations[ForceAnnotation] == "true",
		DeleteEmptyDirData: node.Annotations[DeleteEmptyDirDataAnnotation] == "true",
	}
	if !s.requested() {
		s.policy = drain.Policy{Force: true, DeleteEmptyDirData: true}
	}
	for _, c := range node.Status.Conditions {
		// Another drain's conditions (kubectl evictionrequest drain
		// --report-node-conditions, kubectl drain's) are not this one's.
		if !IsDrainReason(c.Reason) {
			continue
		}
		switch c.Type {
		case corev1.NodeDrainInProgress:
			s.conditions, s.inProgress = true, string(c.Status)+c.Reason+c.Message
		case corev1.NodeDrained:
			s.conditions, s.drained = true, string(c.Status)+c.Reason+c.Message
		}
	}
	return s
}

// requested is true while an admin or a maintenance tool asks for the
// drain: the node is cordoned, and the drain refuses what kubectl drain
// refuses.
func (s nodeState) requested() bool {
	return s.marked || s.maintenance
}

// wanted is true while the node should be drained.
func (s nodeState) wanted() bool {
	return s.requested() || s.shuttingDown
}

// held is true while the maintenance of a node this drain drained is under
// way (MaintenanceInProgress=True, KEP-5683): the node stays drained and
// cordoned, its requests stay, whatever asked for the drain has gone (a
// maintenance tool turns MaintenancePlanned False as it starts). The drain
// ends once the maintenance is over.
func (s nodeState) held() bool {
	return s.maintenanceInProgress && s.conditions
}
