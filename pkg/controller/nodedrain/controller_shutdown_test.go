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

func TestAShuttingDownNodeGetsRequestsWithoutACordon(t *testing.T) {
	f := newFixture(t)
	f.add(shuttingDown().Obj(), pod("web-0").Obj())
	f.sync()
	n := f.refreshNode()
	if n.Spec.Unschedulable {
		t.Error("the drain cordoned a node that shuts down")
	}
	if diff := cmp.Diff(map[string][]string{"web-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress); c == nil || !strings.Contains(c.Message, "the node is shutting down") {
		t.Errorf("DrainInProgress = %+v", c)
	}

	if c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress); c.Reason != ReasonShutdownDrainStarted {
		t.Errorf("DrainInProgress reason %q, want %q", c.Reason, ReasonShutdownDrainStarted)
	}

	// The kubelet is gone: the node lifecycle controller turns Ready to
	// Unknown. The drain goes on.
	*drain.FindNodeCondition(n, corev1.NodeReady) = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}
	if _, err := f.kube.CoreV1().Nodes().UpdateStatus(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refreshNode()
	f.sync()
	if diff := cmp.Diff(map[string][]string{"web-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests once the node stopped posting its status (-want +got):\n%s", diff)
	}
	n = f.refreshNode()

	// The shutdown is canceled: the node is Ready again.
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}, *drain.FindNodeCondition(n, corev1.NodeDrainInProgress)}
	if _, err := f.kube.CoreV1().Nodes().UpdateStatus(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refreshNode()
	f.refreshRequests()
	f.sync()
	if diff := cmp.Diff(map[string][]string{"web-0": {}}, f.requesters()); diff != "" {
		t.Errorf("requests after the node was Ready again (-want +got):\n%s", diff)
	}
}

func TestAnUnreachableNodeIsNoShutdown(t *testing.T) {
	f := newFixture(t)
	f.add(node().Condition(corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.").Obj(), pod("web-0").Obj())
	f.sync()
	if got := f.requesters(); len(got) != 0 {
		t.Errorf("requests for a node that merely stopped posting its status: %v", got)
	}
}
