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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// appExitDelay is how long the pods of the kubelet tests take to exit
// after SIGTERM, as an application that finishes its work: the time a
// surge has to bring a replacement up before the old pod stops serving.
const appExitDelay = "20s"

// KubeletNodeInPool starts a real kubelet node (NewKubeletNode) in the
// test's pool of nodes (PoolLabel=ns), where CreateDeployment puts pods.
func (f *Framework) KubeletNodeInPool(t testing.TB, ns string) *localcluster.KubeletNode {
	t.Helper()
	n := f.NewKubeletNode(t)
	f.PatchNode(t, n.Name, map[string]any{"metadata": map[string]any{"labels": map[string]any{PoolLabel: ns}}})
	return n
}

// OnKubeletNodes lets the pods of a Deployment run on the real kubelet
// nodes, take appExitDelay to exit and get twice that as their grace
// period. For CreateDeployment.
func OnKubeletNodes(dep *appsv1.Deployment) {
	spec := &dep.Spec.Template
	spec.Spec.Tolerations = append(spec.Spec.Tolerations, corev1.Toleration{
		Key: localcluster.KubeletNodeTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	if spec.Annotations == nil {
		spec.Annotations = map[string]string{}
	}
	spec.Annotations[localcluster.ExitDelayAnnotation] = appExitDelay
	spec.Spec.TerminationGracePeriodSeconds = ptr.To(int64(40))
}

// CheckKubeletGracefulShutdownKeepsADeploymentUp checks, on the suite's API,
// with the real kubelet: a one-replica Deployment opted in to the surge
// (optIn) on a node that is shut down gracefully never has zero ready
// replicas, its replacement runs on another node, the old pod ends as the
// kubelet leaves it (Failed, Terminated, DisruptionTarget), the node
// drain's request for it (nodeDrain) completes (or goes with the pod), the
// pod is not evicted twice, and the node powers off once the kubelet is done.
func (f *Framework) CheckKubeletGracefulShutdownKeepsADeploymentUp(t *testing.T, optIn func(*appsv1.Deployment), nodeDrain participant.Participant) {
	t.Helper()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	node := f.KubeletNodeInPool(t, ns)
	f.CreateDeployment(t, ns, "db", 1, "", func(dep *appsv1.Deployment) {
		optIn(dep)
		OnKubeletNodes(dep)
	})
	original := f.PodsOf(t, ns, "db")[0]
	if original.Spec.NodeName != node.Name {
		t.Fatalf("the pod runs on %s, want the kubelet's node %s", original.Spec.NodeName, node.Name)
	}
	// The Deployment being available is not enough: a make test run saw it
	// available before the kubelet had made the pod's sandbox, and the
	// shutdown then stopped a pod that never ran.
	f.WaitForPod(t, ns, original.Name, "the kubelet to run the pod", containersRun)
	f.PoolNode(t, ns)
	w := f.WatchReady(t, ns, "db")

	if err := node.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	f.waitForDrainRequest(t, nodeDrain, ns, original.UID, true)
	f.requestedWhileThePodRuns(t, node.Name, ns, original.Name)
	ended := f.WaitForPod(t, ns, original.Name, "the kubelet to stop the old pod", func(pod *corev1.Pod) error {
		if pod.Status.Phase != corev1.PodFailed {
			return fmt.Errorf("phase %s", pod.Status.Phase)
		}
		return nil
	})
	t.Logf("the old pod ended: %s %s %s %v", ended.Status.Phase, ended.Status.Reason, ended.Status.Message, ended.Status.Conditions)
	f.WaitForReplicas(t, ns, "db", 1)
	select {
	case <-node.PoweredOff():
	case <-time.After(DefaultTimeout):
		t.Error("the node did not power off after its shutdown")
	}
	w.Stop()
	if minReady, _ := w.Extremes(); minReady < 1 {
		t.Errorf("the Deployment had %d ready replicas at one point, want at least 1", minReady)
	}
	for _, pod := range f.PodsOf(t, ns, "db") {
		if pod.UID != original.UID && pod.Spec.NodeName == node.Name {
			t.Errorf("the replacement %s runs on the node that shut down", pod.Name)
		}
	}
	// Complete, or gone with its pod (the scale-back deleted it, and the
	// garbage collector the lifecycle.k8s.io requests it owns).
	status, err := nodeDrain.Status(ctx, ns, original.UID)
	if err != nil || (status.Exists && !status.Complete) {
		t.Errorf("the node drain's request: %+v, %v; want it complete, or gone with its pod", status, err)
	}
	if attempts, _ := f.AuditedEvictions(t, ns, original.Name); attempts > 1 {
		t.Errorf("the old pod was evicted %d times", attempts)
	}
}

// requestedWhileThePodRuns checks, once the node drain requested the
// eviction of a pod of a node that shuts down, that the kubelet has not
// stopped the pod yet: the request came while its interceptors had time.
// It logs how long after the node reported its shutdown that was.
//
// Stopped is a terminal phase or a container that terminated, not any
// phase but Running: a CI run saw the kubelet write Pending, a second after
// the shutdown, for a pod it had started a second before it and that ended
// at its exit delay, 20 seconds later.
func (f *Framework) requestedWhileThePodRuns(t *testing.T, node, ns, name string) {
	t.Helper()
	ctx := t.Context()
	pod, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stopped := podStopped(pod); stopped != "" {
		t.Errorf("the node drain requested the eviction of pod %s once %s: too late for its interceptors", name, stopped)
	} else if pod.Status.Phase != corev1.PodRunning {
		t.Logf("pod %s is %s, its containers not stopped: %v", name, pod.Status.Phase, pod.Status.ContainerStatuses)
	}
	n, err := f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionFalse {
			t.Logf("the request was seen %s after the node reported its shutdown (Ready=False: %s)", time.Since(c.LastTransitionTime.Time).Round(time.Second), c.Message)
		}
	}
}

// containersRun is a condition of WaitForPod: the pod is Running and every
// container of it runs, as its kubelet reports.
func containersRun(pod *corev1.Pod) error {
	if pod.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("phase %s", pod.Status.Phase)
	}
	if len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) {
		return fmt.Errorf("%d container statuses of %d containers", len(pod.Status.ContainerStatuses), len(pod.Spec.Containers))
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running == nil {
			return fmt.Errorf("container %s is not running: %+v", c.Name, c.State)
		}
	}
	return nil
}

// podStopped says how the kubelet stopped pod, if it did: its phase is
// terminal or a container terminated.
func podStopped(pod *corev1.Pod) string {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return "it was " + string(pod.Status.Phase)
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Terminated != nil {
			return fmt.Sprintf("its container %s had terminated (%s, exit code %d)", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode)
		}
	}
	return ""
}

// WaitForPod watches the pod ns/name until a version of it satisfies
// cond, and returns that version. It sees every version, the last one too
// (a deletion's): a pod that the kubelet ends and its ReplicaSet or the
// kubelet removes a moment later is still seen ending.
func (f *Framework) WaitForPod(t testing.TB, ns, name, what string, cond func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	client := f.Kube.CoreV1().Pods(ns)
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	return watchUntil(t, what, func(ctx context.Context) ([]*corev1.Pod, string, error) {
		list, err := client.List(ctx, metav1.ListOptions{FieldSelector: byName})
		if err != nil {
			return nil, "", err
		}
		items := make([]*corev1.Pod, 0, len(list.Items))
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
		return items, list.ResourceVersion, nil
	}, func(ctx context.Context, resourceVersion string) (watch.Interface, error) {
		return client.Watch(ctx, metav1.ListOptions{FieldSelector: byName, ResourceVersion: resourceVersion})
	}, func(*corev1.Pod) bool { return true }, cond)
}
