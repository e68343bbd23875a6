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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// A maintenance tool's flow (KEP-5683): MaintenancePlanned=True drains the
// node; the tool turns it False and MaintenanceInProgress True as it
// starts; the node stays drained and cordoned, its requests stay, until
// MaintenanceInProgress goes.
func TestMaintenanceInProgressKeepsTheNodeDrained(t *testing.T) {
	f := newFixtureWith(t, Options{DrainOnMaintenancePlanned: true})
	f.add(node().Condition(corev1.NodeMaintenancePlanned, corev1.ConditionTrue, "MaintenanceWindow", "").
		Annotation(ForceAnnotation, "true").Obj(), pod("web-0").Obj())
	f.sync()
	if !f.refreshNode().Spec.Unschedulable {
		t.Fatal("the drain did not cordon the node")
	}

	f.setCondition(corev1.NodeMaintenanceInProgress, corev1.ConditionTrue, "Upgrading")
	f.setCondition(corev1.NodeMaintenancePlanned, corev1.ConditionFalse, "")
	f.sync()
	n := f.refreshNode()
	if !n.Spec.Unschedulable || drain.FindNodeCondition(n, corev1.NodeDrainInProgress) == nil {
		t.Errorf("the node under maintenance: unschedulable %v, conditions %+v; want it cordoned and drained", n.Spec.Unschedulable, n.Status.Conditions)
	}
	if diff := cmp.Diff(map[string][]string{"web-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests during the maintenance (-want +got):\n%s", diff)
	}
	if got := f.events(); !slices.Contains(got, EventDrainHeld) {
		t.Errorf("events %v, want %s", got, EventDrainHeld)
	}

	f.setCondition(corev1.NodeMaintenanceInProgress, corev1.ConditionFalse, "")
	f.sync()
	n = f.refreshNode()
	if n.Spec.Unschedulable || drain.FindNodeCondition(n, corev1.NodeDrainInProgress) != nil {
		t.Errorf("the node after its maintenance: unschedulable %v, conditions %+v; want the drain over", n.Spec.Unschedulable, n.Status.Conditions)
	}
	if diff := cmp.Diff(map[string][]string{"web-0": {}}, f.requesters()); diff != "" {
		t.Errorf("requests after the maintenance (-want +got):\n%s", diff)
	}
}

// MaintenanceInProgress alone starts no drain: it only holds one.
func TestMaintenanceInProgressAloneDrainsNothing(t *testing.T) {
	f := newFixtureWith(t, Options{DrainOnMaintenancePlanned: true})
	f.add(node().Condition(corev1.NodeMaintenanceInProgress, corev1.ConditionTrue, "KernelLivePatch", "").Obj(), pod("web-0").Obj())
	f.sync()
	if got, n := f.requesters(), f.refreshNode(); len(got) != 0 || n.Spec.Unschedulable {
		t.Errorf("requests %v, unschedulable %v; want none", got, n.Spec.Unschedulable)
	}
}
