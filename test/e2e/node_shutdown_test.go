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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// Flow 6a: the kubelet ends a pod in a graceful node shutdown (phase Failed,
// reason Terminated): its request completes, with no eviction.
func TestGracefulNodeShutdownCompletesTheRequest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "batch-0")
	er, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	f.WaitUntilActive(t, ns, er.Name, parkedInterceptor)

	// What the kubelet writes when it terminates pods for a shutdown.
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Reason = "Terminated"
	pod.Status.Message = "Pod was terminated in response to imminent node shutdown."
	if _, err := f.Kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	done := f.WaitForCompletion(t, ns, er.Name, v1alpha1.CompleteReasonPodTerminated)
	if !strings.Contains(done.Status.Message, "imminent node shutdown") {
		t.Errorf("status.message = %q, want the pod's reason", done.Status.Message)
	}
	if attempts, _ := f.AuditedEvictions(t, ns, pod.Name); attempts != 0 {
		t.Errorf("the terminated pod was evicted %d times", attempts)
	}
}

// Flow 6b: a node shut down without the kubelet noticing is marked with the
// node.kubernetes.io/out-of-service taint; kube-controller-manager removes
// its pods (taint eviction, then pod GC force-deletes them on the NotReady
// node) and their requests complete.
func TestOutOfServiceNodeCompletesTheRequests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)

	// A node of its own: the test shuts it down.
	name := f.NewNode(t)
	nodeDrain := newRequester(t, "nodemaintenance.k8s.io")
	var requests []string
	for _, podName := range []string{"db-0", "web-0"} {
		pod := f.CreatePod(t, ns, podName, framework.PodOptions{Node: name, Interceptors: []string{parkedInterceptor}})
		er, err := nodeDrain.Request(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		requests = append(requests, er.Name)
	}

	// The node goes down: kwok stops acting as its kubelet, it is NotReady,
	// and the admin marks it out of service.
	node, err := f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(node.Labels, localcluster.KwokNodeLabel)
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute})
	if _, err := f.Kube.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "the pods of "+name+" to be removed", func(ctx context.Context) error {
		// A heartbeat kwok queued before it let go may mark the node Ready
		// once more: keep it as a dead kubelet leaves it, which is not a
		// graceful shutdown.
		if err := nodeReadyIs(ctx, name, corev1.ConditionUnknown); err != nil {
			if err := setNodeReadyCondition(ctx, name, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."); err != nil {
				return err
			}
		}
		pods, err := f.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left, the first terminating since %v", len(pods.Items), pods.Items[0].DeletionTimestamp)
		}
		return nil
	})

	// Pod GC marks a pod Failed before it force-deletes it: the controller
	// may see either first.
	for _, name := range requests {
		f.WaitForCompletion(t, ns, name, v1alpha1.CompleteReasonPodTerminated, v1alpha1.CompleteReasonPodDeleted)
	}
}

func nodeReadyIs(ctx context.Context, name string, want corev1.ConditionStatus) error {
	node, err := f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == want {
				return nil
			}
			return fmt.Errorf("node %s is Ready=%s", name, c.Status)
		}
	}
	return fmt.Errorf("node %s has no Ready condition", name)
}

// setNodeReadyCondition writes the node's Ready condition as a kubelet, or
// the node lifecycle controller for a kubelet that stopped posting, would.
func setNodeReadyCondition(ctx context.Context, name string, status corev1.ConditionStatus, reason, message string) error {
	node, err := f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	for i := range node.Status.Conditions {
		if c := &node.Status.Conditions[i]; c.Type == corev1.NodeReady {
			c.Status, c.Reason, c.Message = status, reason, message
			c.LastHeartbeatTime, c.LastTransitionTime = now, now
		}
	}
	_, err = f.Kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("retrying: %w", err)
	}
	return err
}
