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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// stuckExitDelay is how long a pod that ignores SIGTERM would run: past
// any grace period of the kubelet tests, so the kubelet kills it.
const stuckExitDelay = "1h"

// CheckKubeletShutdownOfAHeldPod checks, on the suite's API, with the real
// kubelet: a pod held (PodOptions) by a participant that never answers, on
// a node shut down gracefully. The node drain (nodeDrain) requests its
// eviction without a cordon; the kubelet kills it at the end of its grace
// period (it ignores SIGTERM); its request completes as the pod is
// terminal; the drain ends Drained; the machine powers off. Nothing hangs,
// and nothing is evicted.
func (f *Framework) CheckKubeletShutdownOfAHeldPod(t *testing.T, held PodOptions, nodeDrain participant.Participant) {
	t.Helper()
	ns, node, pod, n := f.shutDownWithAHeldPod(t, held, stuckExitDelay, nodeDrain)
	if n.Spec.Unschedulable {
		t.Error("the drain cordoned a node that shuts down")
	}
	// The kubelet may write Failed before its container's terminated
	// state (a cold run on the 1.38 controllers read no exit code): wait
	// for the version that has both.
	ended := f.WaitForPod(t, ns, pod.Name, "the kubelet to kill the pod", func(pod *corev1.Pod) error {
		if err := podFailedByShutdown(pod); err != nil {
			return err
		}
		if exitCode(pod) == -1 {
			return fmt.Errorf("no container terminated yet: %v", pod.Status.ContainerStatuses)
		}
		return nil
	})
	if code := exitCode(ended); code != 137 {
		t.Errorf("the container exited %d, want 137: killed at the end of its grace period", code)
	}
	Eventually(t, DefaultTimeout, "the node drain's request to complete", func(ctx context.Context) error {
		status, err := nodeDrain.Status(ctx, ns, pod.UID)
		if err != nil {
			return err
		}
		if !status.Complete {
			return fmt.Errorf("%+v", status)
		}
		return nil
	})
	f.WaitForNode(t, node.Name, "Drained=True", NodeConditionIs(corev1.NodeDrained, corev1.ConditionTrue, nodedrain.ReasonShutdownDrainCompleted, ""))
	select {
	case <-node.PoweredOff():
	case <-time.After(DefaultTimeout):
		t.Error("the machine did not power off after its shutdown")
	}
	if attempts, _ := f.AuditedEvictions(t, ns, pod.Name); attempts != 0 {
		t.Errorf("the pod was evicted %d times", attempts)
	}
}

// exitCode is the exit code of the pod's first container, -1 without one.
func exitCode(pod *corev1.Pod) int32 {
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return s.State.Terminated.ExitCode
		}
	}
	return -1
}

// CheckKubeletNonGracefulShutdown checks, on the suite's API, with the
// real kubelet: a node whose kubelet dies without a word (its machine's
// power cut) goes Ready=Unknown; once an admin taints it
// node.kubernetes.io/out-of-service, kube-controller-manager removes its
// pods, held (PodOptions) by a participant that never answers and whose
// eviction a requester (nodeDrain) asked for, and their requests complete.
func (f *Framework) CheckKubeletNonGracefulShutdown(t *testing.T, held PodOptions, nodeDrain participant.Participant) {
	t.Helper()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	node := f.NewKubeletNode(t)
	held.Node = node.Name
	held.Mutate = onKubeletNodeExitingAfter(held.Mutate, appExitDelay)
	var pods []*corev1.Pod
	for _, name := range []string{"db-0", "web-0"} {
		pod := f.CreatePod(t, ns, name, held)
		if _, err := nodeDrain.Request(ctx, pod, nil); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, pod)
	}
	node.Kill()
	// The node lifecycle controller notices the silence after its grace
	// period (50 s by default).
	f.WaitForNode(t, node.Name, "Ready=Unknown", func(n *corev1.Node) error {
		if c := drain.FindNodeCondition(n, corev1.NodeReady); c == nil || c.Status != corev1.ConditionUnknown {
			return fmt.Errorf("node condition Ready: %v", c)
		}
		return nil
	})
	f.MustKubectl(t, "taint", "node", node.Name, corev1.TaintNodeOutOfService+"=nodeshutdown:NoExecute")
	for _, pod := range pods {
		f.WaitForPodGone(t, ns, pod.Name)
		Eventually(t, DefaultTimeout, "the request of "+pod.Name+" to complete", func(ctx context.Context) error {
			status, err := nodeDrain.Status(ctx, ns, pod.UID)
			if err != nil {
				return err
			}
			if !status.Complete && status.Exists {
				return fmt.Errorf("%+v", status)
			}
			return nil
		})
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, pods[0].Name, metav1.GetOptions{}); err == nil {
		t.Error("a pod of the lost node is still there")
	}
}
