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
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

func conditionIs(node *corev1.Node, t corev1.NodeConditionType, status corev1.ConditionStatus, message string) error {
	c := drain.FindNodeCondition(node, t)
	if c == nil || c.Status != status || !strings.Contains(c.Message, message) {
		return fmt.Errorf("%s = %+v, want %s with %q", t, c, status, message)
	}
	return nil
}

// A node marked for drain is cordoned and emptied, pods that land later too;
// its conditions survive the kubelet's status updates; unmarking it
// uncordons it.
func TestDeclarativeNodeDrain(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	web := []*corev1.Pod{
		f.CreatePod(t, ns, "web-0", framework.PodOptions{Node: node}),
		f.CreatePod(t, ns, "web-1", framework.PodOptions{Node: node}),
	}
	f.SkippedPods(t, ns, node)

	f.MarkForDrain(t, node, true)
	drained := f.WaitForNode(t, node, "the node to be drained", func(n *corev1.Node) error {
		if !n.Spec.Unschedulable || n.Annotations[drain.CordonedByAnnotation] != nodedrain.DefaultRequesterName {
			return fmt.Errorf("not cordoned by the drain: unschedulable %v, annotations %v", n.Spec.Unschedulable, n.Annotations)
		}
		if err := conditionIs(n, corev1.NodeDrained, corev1.ConditionTrue, "skipped: 1 DaemonSet-managed, 1 mirror"); err != nil {
			return err
		}
		return conditionIs(n, corev1.NodeDrainInProgress, corev1.ConditionFalse, "no pod is left to evict")
	})
	for _, pod := range web {
		f.WaitForPodGone(t, ns, pod.Name)
		if _, granted := f.AuditedEvictions(t, ns, pod.Name); granted != 1 {
			t.Errorf("pod %s was evicted %d times, want once", pod.Name, granted)
		}
	}
	f.WaitForEvents(t, "", "Node", node, nodedrain.EventCordoned, nodedrain.EventDrainStarted, nodedrain.EventDrained)

	// A pod that lands on the node later is evicted too (perhaps before it
	// even runs).
	late := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "late-0", Namespace: ns},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Create(t.Context(), late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForPodGone(t, ns, late.Name)
	if _, granted := f.AuditedEvictions(t, ns, late.Name); granted != 1 {
		t.Errorf("pod late-0 was evicted %d times, want once", granted)
	}

	// The kubelet's status updates leave the drain's conditions alone.
	beat := drain.FindNodeCondition(drained, corev1.NodeReady).LastHeartbeatTime
	f.WaitForNode(t, node, "a status update of the kubelet", func(n *corev1.Node) error {
		if c := drain.FindNodeCondition(n, corev1.NodeReady); c == nil || !c.LastHeartbeatTime.After(beat.Time) {
			return fmt.Errorf("no heartbeat since %v", beat)
		}
		return conditionIs(n, corev1.NodeDrained, corev1.ConditionTrue, "")
	})

	f.MarkForDrain(t, node, false)
	f.WaitForNode(t, node, "the drain to end", func(n *corev1.Node) error {
		if n.Spec.Unschedulable || n.Annotations[drain.CordonedByAnnotation] != "" {
			return fmt.Errorf("still cordoned: %v, annotations %v", n.Spec.Unschedulable, n.Annotations)
		}
		if drain.FindNodeCondition(n, corev1.NodeDrained) != nil || drain.FindNodeCondition(n, corev1.NodeDrainInProgress) != nil {
			return fmt.Errorf("the drain's conditions remain: %+v", n.Status.Conditions)
		}
		return nil
	})
	f.WaitForEvents(t, "", "Node", node, nodedrain.EventUncordoned, nodedrain.EventDrainStopped)
}

// The node's conditions count what a drain waits for; ending the drain
// withdraws its requester, canceling the requests nobody else wants.
// As kubectl drain, the declarative drain refuses a pod that declares no
// controller, and then one with local data, and changes nothing, until the
// Node's annotations allow them.
func TestDeclarativeNodeDrainRefusesBarePodsAndLocalData(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "solo-0", framework.PodOptions{Node: node})
	f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{nodedrain.DrainAnnotation: "true"}}})
	f.WaitForNode(t, node, "the drain refused", func(n *corev1.Node) error {
		return conditionIs(n, corev1.NodeDrainInProgress, corev1.ConditionFalse,
			"cannot request the eviction of Pods that declare no controller (annotate the node "+nodedrain.ForceAnnotation+"=true to override): "+ns+"/solo-0")
	})
	f.WaitForEvents(t, "", "Node", node, nodedrain.EventDrainRefused)
	checkNothingChanged(t, node, ns, pod)

	// The server's pod cache must keep the emptyDir volumes its drain reads.
	cache := f.CreatePod(t, ns, "cache-0", framework.PodOptions{Node: node, Mutate: func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}})
	f.MarkForDrain(t, node, true)
	f.WaitForNode(t, node, "the drain refused for local data", func(n *corev1.Node) error {
		return conditionIs(n, corev1.NodeDrainInProgress, corev1.ConditionFalse,
			"cannot request the eviction of Pods with local storage (annotate the node "+nodedrain.DeleteEmptyDirDataAnnotation+"=true to override): "+ns+"/cache-0")
	})
	checkNothingChanged(t, node, ns, pod, cache)

	f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{nodedrain.DeleteEmptyDirDataAnnotation: "true"}}})
	f.WaitForPodGone(t, ns, pod.Name)
	f.WaitForPodGone(t, ns, cache.Name)
	f.MarkForDrain(t, node, false)
}

// checkNothingChanged fails t if a refused drain cordoned node or
// requested the eviction of pods.
func checkNothingChanged(t *testing.T, node, ns string, pods ...*corev1.Pod) {
	t.Helper()
	if n, err := f.Kube.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{}); err != nil || n.Spec.Unschedulable {
		t.Errorf("a refused drain cordoned the node: %v, %v", n, err)
	}
	for _, pod := range pods {
		if _, err := f.EvictionRequests(ns).Get(t.Context(), string(pod.UID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a refused drain requested the eviction of %s: %v", pod.Name, err)
		}
	}
}

func TestDeclarativeNodeDrainShowsProgressAndWithdraws(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	parked := f.CreatePod(t, ns, "db-0", framework.PodOptions{Node: node, Interceptors: []string{parkedInterceptor}})
	f.CreatePod(t, ns, "web-0", framework.PodOptions{Node: node})

	f.MarkForDrain(t, node, true)
	f.WaitForNode(t, node, "the drain's progress on the node", func(n *corev1.Node) error {
		if err := conditionIs(n, corev1.NodeDrainInProgress, corev1.ConditionTrue, "1 pod left to evict (1 intercepted)"); err != nil {
			return err
		}
		return conditionIs(n, corev1.NodeDrained, corev1.ConditionFalse, "1 pod left to evict")
	})
	er := f.WaitUntilActive(t, ns, string(parked.UID), parkedInterceptor)
	if len(er.Spec.Requesters) != 1 || er.Spec.Requesters[0].Name != nodedrain.DefaultRequesterName {
		t.Errorf("requesters %v, want the node drain", er.Spec.Requesters)
	}

	f.MarkForDrain(t, node, false)
	f.WaitForCompletion(t, ns, string(parked.UID), v1alpha1.CompleteReasonCanceled)
	f.WaitForNode(t, node, "the node uncordoned", func(n *corev1.Node) error {
		if n.Spec.Unschedulable || drain.FindNodeCondition(n, corev1.NodeDrainInProgress) != nil {
			return fmt.Errorf("unschedulable %v, conditions %+v", n.Spec.Unschedulable, n.Status.Conditions)
		}
		return nil
	})
}

// Kubernetes 1.37's node lifecycle conditions: a maintenance tool that sets
// MaintenancePlanned=True gets the node drained and Drained=True, and
// MaintenancePlanned=False ends the drain.
func TestMaintenancePlannedDrainsTheNode(t *testing.T) {
	t.Parallel()
	f.CheckMaintenancePlannedDrain(t)
}

// GracefulNodeShutdownInProgress=True is the shutdown signal: the pods'
// evictions are requested without a cordon; False withdraws them.
func TestGracefulNodeShutdownInProgressRequestsAndWithdraws(t *testing.T) {
	t.Parallel()
	nodeDrain, err := participant.New(evictionapi.Coordination, nodedrain.DefaultRequesterName, f.Kube, f.Clientset, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.CheckGracefulShutdownConditionDrain(t, nodeDrain)
}

// The declarative drain's deadline: a Node annotated with a deadline and
// delete gets the pod a PodDisruptionBudget keeps deleted at the deadline,
// and ends Drained.
func TestDeclarativeDrainDeadline(t *testing.T) {
	t.Parallel()
	f.CheckDeclarativeDrainDeadline(t)
}

// A pool's budget: six nodes of one pool marked for drain at once, under
// a budget of two drains per pool, never have more than two draining, the
// others waiting uncordoned, and all six end Drained.
func TestDeclarativeDrainPoolBudget(t *testing.T) {
	t.Parallel()
	f.CheckDeclarativeDrainPoolBudget(t)
}

// A declarative drain with a deadline, called off before it, leaves no
// deadline on the request it withdrew from.
func TestDeclarativeDrainCalledOffRemovesItsDeadline(t *testing.T) {
	t.Parallel()
	nodeDrain, err := participant.New(evictionapi.Coordination, nodedrain.DefaultRequesterName, f.Kube, f.Clientset, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.CheckDeclarativeDrainCalledOffRemovesItsDeadline(t, nodeDrain)
}

// A drain whose view of a node lags behind does not ask again for a pod
// kube-apiserver no longer has, whose request went with it.
func TestADrainDoesNotAskAgainForAPodGone(t *testing.T) {
	t.Parallel()
	f.CheckADrainDoesNotAskAgainForAPodGone(t, evictionapi.Coordination)
}
