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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// setCondition writes a condition into the stored node's status and the
// cache, as a kubelet, an admin or a maintenance tool would.
func (f *fixture) setCondition(t corev1.NodeConditionType, status corev1.ConditionStatus, reason string) {
	f.t.Helper()
	n := f.refreshNode()
	if c := drain.FindNodeCondition(n, t); c != nil {
		c.Status, c.Reason = status, reason
	} else {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: status, Reason: reason})
	}
	if _, err := f.kube.CoreV1().Nodes().UpdateStatus(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.refreshNode()
}

// Kubernetes 1.37's GracefulNodeShutdownInProgress condition is the
// shutdown signal, whatever Ready says: True requests the pods' evictions
// without a cordon, False withdraws them.
func TestGracefulNodeShutdownInProgressStartsAndStopsTheDrain(t *testing.T) {
	f := newFixture(t)
	f.add(node().Condition(corev1.NodeGracefulNodeShutdownInProgress, corev1.ConditionTrue, "NodeShutdown", "").Obj(), pod("web-0").Obj())
	f.sync()
	n := f.refreshNode()
	if n.Spec.Unschedulable {
		t.Error("the drain cordoned a node that shuts down")
	}
	if diff := cmp.Diff(map[string][]string{"web-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress); c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonShutdownDrainStarted {
		t.Errorf("DrainInProgress = %+v, want True with reason %s", c, ReasonShutdownDrainStarted)
	}

	// The condition says the shutdown is off even though the drain's own
	// reason says a shutdown drain started: the condition wins.
	f.setCondition(corev1.NodeGracefulNodeShutdownInProgress, corev1.ConditionFalse, "")
	f.sync()
	if diff := cmp.Diff(map[string][]string{"web-0": {}}, f.requesters()); diff != "" {
		t.Errorf("requests after GracefulNodeShutdownInProgress turned False (-want +got):\n%s", diff)
	}
	if c := drain.FindNodeCondition(f.refreshNode(), corev1.NodeDrainInProgress); c != nil {
		t.Errorf("DrainInProgress after the shutdown was called off: %+v", c)
	}
}

// A Ready condition that says the node shuts down is no shutdown when
// GracefulNodeShutdownInProgress says otherwise.
func TestGracefulNodeShutdownInProgressFalseOverridesReady(t *testing.T) {
	f := newFixture(t)
	f.add(shuttingDown().Condition(corev1.NodeGracefulNodeShutdownInProgress, corev1.ConditionFalse, "", "").Obj(), pod("web-0").Obj())
	f.sync()
	if got := f.requesters(); len(got) != 0 {
		t.Errorf("requests for a node whose GracefulNodeShutdownInProgress is False: %v", got)
	}
}

// With DrainOnMaintenancePlanned, MaintenancePlanned=True drains the node as
// the drain annotation does (a cordon, kubectl drain's refusals), ends with
// Drained=True for the maintenance tool, and is withdrawn when the
// condition goes; without it the condition is left to others.
func TestMaintenancePlannedDrainsWhenOptedIn(t *testing.T) {
	planned := func() *corev1.Node {
		return node().Condition(corev1.NodeMaintenancePlanned, corev1.ConditionTrue, "MaintenanceWindow", "").
			Annotation(ForceAnnotation, "true").Obj()
	}
	off := newFixture(t)
	off.add(planned(), pod("web-0").Obj())
	off.sync()
	if got, n := off.requesters(), off.refreshNode(); len(got) != 0 || n.Spec.Unschedulable {
		t.Errorf("without the option: requests %v, unschedulable %v", got, n.Spec.Unschedulable)
	}

	f := newFixtureWith(t, Options{DrainOnMaintenancePlanned: true})
	f.add(planned(), pod("web-0").Obj())
	f.sync()
	n := f.refreshNode()
	if !n.Spec.Unschedulable || n.Annotations[drain.CordonedByAnnotation] != me {
		t.Errorf("node after the drain started: unschedulable %v, annotations %v", n.Spec.Unschedulable, n.Annotations)
	}
	c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonDrainStarted || !strings.Contains(c.Message, "MaintenancePlanned condition is True") {
		t.Errorf("DrainInProgress = %+v", c)
	}

	if err := f.pods.Delete(pod("web-0").Obj()); err != nil {
		t.Fatal(err)
	}
	f.deleteRequest(pod("web-0").Obj())
	f.sync()
	if c := drain.FindNodeCondition(f.refreshNode(), corev1.NodeDrained); c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonDrainCompleted {
		t.Errorf("Drained = %+v, want True with reason %s", c, ReasonDrainCompleted)
	}

	f.setCondition(corev1.NodeMaintenancePlanned, corev1.ConditionFalse, "")
	f.sync()
	n = f.refreshNode()
	if n.Spec.Unschedulable || drain.FindNodeCondition(n, corev1.NodeDrained) != nil {
		t.Errorf("node after MaintenancePlanned turned False: unschedulable %v, conditions %+v", n.Spec.Unschedulable, n.Status.Conditions)
	}
}

// A refused drain reports KEP-5683's conditions both False with a reason of
// its own.
func TestARefusedDrainReportsBothConditionsFalse(t *testing.T) {
	f := newFixture(t)
	f.add(node().Annotation(DrainAnnotation, "true").Obj(), pod("bare").Obj())
	f.sync()
	n := f.refreshNode()
	for _, ct := range []corev1.NodeConditionType{corev1.NodeDrainInProgress, corev1.NodeDrained} {
		if c := drain.FindNodeCondition(n, ct); c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonDrainRefused {
			t.Errorf("%s = %+v, want False with reason %s", ct, c, ReasonDrainRefused)
		}
	}
}

// The conditions another drain wrote (kubectl evictionrequest drain
// --report-node-conditions here) are left alone on a node this drain does
// not drain.
func TestAnotherDrainsConditionsStay(t *testing.T) {
	f := newFixture(t)
	f.add(node().Condition(corev1.NodeDrainInProgress, corev1.ConditionFalse, pluginDrainFailed, "timed out").
		Condition(corev1.NodeDrained, corev1.ConditionFalse, pluginDrainFailed, "timed out").Obj())
	f.controller.enqueueNodeOfInterest(nodeName)
	if f.controller.queue.Len() != 0 {
		t.Error("a node with another drain's conditions was enqueued")
	}
	f.sync()
	if writes := f.writes(); writes != 0 {
		t.Errorf("the drain wrote %d times to a node it does not drain", writes)
	}
	n := f.refreshNode()
	if c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress); c == nil || c.Reason != pluginDrainFailed {
		t.Errorf("DrainInProgress = %+v, want the plugin's", c)
	}
}

// A drain for a shutdown under way when the controller was upgraded, its
// condition written with the reasons of before, goes on once the kubelet is
// gone.
func TestAShutdownDrainOfTheLastReleaseGoesOn(t *testing.T) {
	f := newFixture(t)
	f.add(node().Condition(corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.").
		Condition(corev1.NodeDrainInProgress, corev1.ConditionTrue, "NodeShuttingDown", "Draining because the node is shutting down").Obj(), pod("web-0").Obj())
	f.sync()
	if diff := cmp.Diff(map[string][]string{"web-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if c := drain.FindNodeCondition(f.refreshNode(), corev1.NodeDrainInProgress); c == nil || c.Reason != ReasonShutdownDrainStarted {
		t.Errorf("DrainInProgress = %+v, want it rewritten with %s", c, ReasonShutdownDrainStarted)
	}
}

// pluginDrainFailed is a reason of kubectl evictionrequest drain
// --report-node-conditions: another drain's condition.
const pluginDrainFailed = "KubectlEvictionRequestDrainFailed"
