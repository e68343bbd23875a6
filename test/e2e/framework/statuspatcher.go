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
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// kubeletShutdownMessage is what the kubelet's Ready condition says while a
// graceful node shutdown is under way.
const kubeletShutdownMessage = "node is shutting down"

// statusPatcherReport is a write, by a user who may only patch
// nodes/status, of a Node's Ready and GracefulNodeShutdownInProgress
// conditions: conditions replace those of the node.
type statusPatcherReport struct {
	name       string
	conditions []corev1.NodeCondition
	// refused: the evictionrequest-node-drain policy refuses the write as
	// the report of a graceful shutdown by someone other than the node.
	// Otherwise it admits it, and the node drain reads no shutdown in it.
	refused bool
}

// statusPatcherReports are the reports the policy and the node drain once
// read differently: one look-alike of the kubelet's message, which Go's
// Unicode case folding read as a shutdown and CEL's ASCII one did not,
// and two GracefulNodeShutdownInProgress conditions, of which the policy
// read any and the node drain the first.
var statusPatcherReports = func() []statusPatcherReport {
	ready := func(message string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: message}
	}
	shutdown := func(status corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: corev1.NodeGracefulNodeShutdownInProgress, Status: status, Reason: "NodeShutdown"}
	}
	return []statusPatcherReport{
		{"Ready=False saying node İs shutting down", []corev1.NodeCondition{ready("node \u0130s shutting down")}, false},
		{"GracefulNodeShutdownInProgress Unknown then False, Ready=False saying node is shutting down",
			[]corev1.NodeCondition{shutdown(corev1.ConditionUnknown), shutdown(corev1.ConditionFalse), ready(kubeletShutdownMessage)}, true},
		{"GracefulNodeShutdownInProgress False then Unknown, Ready=False saying node is shutting down",
			[]corev1.NodeCondition{shutdown(corev1.ConditionFalse), shutdown(corev1.ConditionUnknown), ready(kubeletShutdownMessage)}, false},
	}
}()

// CheckAStatusPatcherStartsNoShutdownDrain checks, on the API of the
// suite, that a user who may only patch nodes/status cannot start the
// node drain's drain for a graceful shutdown by conditions the
// evictionrequest-node-drain policy and the node drain (nodeDrain) might
// read differently: the policy refuses the write as a shutdown reported by
// someone other than the node, or admits it and the node drain reads no
// shutdown in it. Either way the pod of the node, which no participant
// holds, gets no EvictionRequest and is not evicted.
func (f *Framework) CheckAStatusPatcherStartsNoShutdownDrain(t *testing.T, nodeDrain participant.Participant) {
	t.Helper()
	for _, report := range statusPatcherReports {
		t.Run(report.name, func(t *testing.T) {
			t.Parallel()
			f.checkStatusPatcherReport(t, report, nodeDrain)
		})
	}
}

func (f *Framework) checkStatusPatcherReport(t *testing.T, report statusPatcherReport, nodeDrain participant.Participant) {
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "web-0", PodOptions{Node: node})
	patcher := f.statusPatcher(t, node)
	// kwok turns a node that is not Ready back to Ready at once: handed to
	// no one, the node keeps the conditions written (kube-controller-manager
	// turns them Unknown only after its grace period).
	f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"labels": map[string]any{localcluster.KwokNodeLabel: nil}}})

	err := f.replaceNodeConditions(t, patcher, node, report.conditions)
	switch {
	case report.refused:
		if want := "may not report a graceful shutdown of node " + node; !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("the write: %v, want the policy's 403 saying %q", err, want)
		}
	case err != nil:
		t.Fatalf("the write: %v, want it admitted: it reports no shutdown", err)
	}
	f.waitForTheNodeDrainToRead(t, node)

	status, err := nodeDrain.Status(t.Context(), ns, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	if status.Exists {
		t.Errorf("the pod got an EvictionRequest: %+v", status)
	}
	if attempts, _ := f.AuditedEvictions(t, ns, pod.Name); attempts != 0 {
		t.Errorf("the pod was evicted %d times", attempts)
	}
	if current, err := f.Kube.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{}); err != nil || current.DeletionTimestamp != nil {
		t.Errorf("the pod: %v, %v, want it running", err, current.GetDeletionTimestamp())
	}
}

// statusPatcher is a client of a user of its own who may only patch
// nodes/status, once the grant took effect.
func (f *Framework) statusPatcher(t *testing.T, node string) kubernetes.Interface {
	t.Helper()
	user := "status-patcher-" + node
	f.GrantCluster(t, user, user, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}})
	patcher, err := kubernetes.NewForConfig(f.ImpersonatingConfig(user))
	if err != nil {
		t.Fatal(err)
	}
	noop := []byte(`[{"op":"test","path":"/metadata/name","value":"` + node + `"}]`)
	Eventually(t, time.Minute, "the RBAC of "+user, func(ctx context.Context) error {
		_, err := patcher.CoreV1().Nodes().Patch(ctx, node, types.JSONPatchType, noop, metav1.PatchOptions{}, "status")
		return err
	})
	return patcher
}

// replaceNodeConditions replaces, as client, the node's conditions of the
// types of conditions with conditions, in their order, by a JSON patch of
// its status, returning the error.
func (f *Framework) replaceNodeConditions(t *testing.T, client kubernetes.Interface, node string, conditions []corev1.NodeCondition) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	current, err := f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replaced := map[corev1.NodeConditionType]bool{}
	for _, c := range conditions {
		replaced[c.Type] = true
	}
	var kept []corev1.NodeCondition
	for _, c := range current.Status.Conditions {
		if !replaced[c.Type] {
			kept = append(kept, c)
		}
	}
	patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/status/conditions", "value": append(kept, conditions...)}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.CoreV1().Nodes().Patch(ctx, node, types.JSONPatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// waitForTheNodeDrainToRead waits until the node drain read the node as it
// is now. It writes a condition of the drain's own, as a drain that ended
// leaves it: the node drain removes it from a node it does not drain, and
// replaces it on one it drains.
func (f *Framework) waitForTheNodeDrainToRead(t *testing.T, node string) {
	t.Helper()
	f.SetNodeCondition(t, node, corev1.NodeDrainInProgress, corev1.ConditionFalse, nodedrain.ReasonDrainCompleted)
	f.WaitForNode(t, node, "the node drain to read the node", func(n *corev1.Node) error {
		if c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress); c != nil && c.Status == corev1.ConditionFalse && c.Reason == nodedrain.ReasonDrainCompleted {
			return fmt.Errorf("DrainInProgress is still the one written: %+v", c)
		}
		return nil
	})
}
