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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// CheckKubeletShutdownCalledOff checks, on the suite's API, with the real
// kubelet: a graceful shutdown called off (PrepareForShutdown(false))
// while the kubelet stops a pod held (PodOptions) by a participant that
// never answers. The node drain (nodeDrain) requests the pod's eviction;
// the kubelet of Kubernetes 1.37 finishes stopping the pods it began to
// stop before it handles the cancellation, so the pod ends Failed; then
// the node is Ready and schedulable again, the drain ends (its conditions
// removed, nothing of its requests left open), the machine stays on, and
// nothing was evicted.
func (f *Framework) CheckKubeletShutdownCalledOff(t *testing.T, held PodOptions, nodeDrain participant.Participant) {
	t.Helper()
	ctx := t.Context()
	ns, node, pod, _ := f.shutDownWithAHeldPod(t, held, appExitDelay, nodeDrain)
	canceled, err := node.CancelShutdown(ctx)
	if err != nil || !canceled {
		t.Fatalf("calling the shutdown off: %v, %v", canceled, err)
	}
	ended := f.WaitForPod(t, ns, pod.Name, "the kubelet to finish stopping the pod", podFailedByShutdown)
	f.WaitForNode(t, node.Name, "the node Ready again and the drain over", func(n *corev1.Node) error {
		if !drain.IsNodeConditionTrue(n, corev1.NodeReady) {
			return fmt.Errorf("not Ready: %v", drain.FindNodeCondition(n, corev1.NodeReady))
		}
		return noDrainConditions(n)
	})
	status, err := nodeDrain.Status(ctx, ns, pod.UID)
	if err != nil || (status.Requested && !status.Complete) {
		t.Errorf("the node drain's request after the cancellation: %+v, %v; want it withdrawn or complete", status, err)
	}
	// A machine that powers off does so KubeletNodePowerOffDelay after
	// the kubelet released its delay lock, which it had by now.
	select {
	case <-node.PoweredOff():
		t.Error("the machine powered off after its shutdown was called off")
	case <-time.After(localcluster.KubeletNodePowerOffDelay + time.Second):
	}
	if attempts, _ := f.AuditedEvictions(t, ns, pod.Name); attempts != 0 {
		t.Errorf("the pod was evicted %d times", attempts)
	}
	t.Logf("the pod after the called-off shutdown: %s %s", ended.Status.Phase, ended.Status.Reason)
}

// shutDownWithAHeldPod starts a real kubelet node with a pod held
// (PodOptions) by a participant that never answers, whose containers take
// exitDelay to exit after SIGTERM, shuts the node down gracefully, and
// waits until the node drain (nodeDrain) requested the pod's eviction.
// It returns the pod's namespace, the node, the pod and the node as the
// drain's start left it.
func (f *Framework) shutDownWithAHeldPod(t *testing.T, held PodOptions, exitDelay string, nodeDrain participant.Participant) (string, *localcluster.KubeletNode, *corev1.Pod, *corev1.Node) {
	t.Helper()
	ns := f.NewNamespace(t)
	node := f.NewKubeletNode(t)
	held.Node = node.Name
	held.Mutate = onKubeletNodeExitingAfter(held.Mutate, exitDelay)
	pod := f.CreatePod(t, ns, "db-0", held)
	if err := node.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := f.WaitForNode(t, node.Name, "the drain for the shutdown", NodeConditionIs(corev1.NodeDrainInProgress, corev1.ConditionTrue, nodedrain.ReasonShutdownDrainStarted, "1 pod left"))
	f.waitForDrainRequest(t, nodeDrain, ns, pod.UID, true)
	return ns, node, pod, n
}

// podFailedByShutdown is true for a pod the kubelet stopped for a node
// shutdown: Failed, reason Terminated, DisruptionTarget=True
// (TerminationByKubelet).
func podFailedByShutdown(pod *corev1.Pod) error {
	if pod.Status.Phase != corev1.PodFailed || pod.Status.Reason != "Terminated" {
		return fmt.Errorf("phase %s, reason %q", pod.Status.Phase, pod.Status.Reason)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonTerminationByKubelet {
			return nil
		}
	}
	return fmt.Errorf("no DisruptionTarget=True (TerminationByKubelet): %v", pod.Status.Conditions)
}
