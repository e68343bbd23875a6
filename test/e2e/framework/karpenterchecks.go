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
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// podDeleted is the reason of the end of a request whose pod was deleted,
// on both APIs.
const podDeleted = "PodDeleted"

// endedWithThePod is true when a request ended because its pod was
// deleted: our API's Complete condition says so; on lifecycle.k8s.io the
// Eviction's TargetEvicted condition does, or the garbage collector removed
// the Eviction with the pod's EvictionRequests first.
func endedWithThePod(e RequestEnd) bool {
	return e.Reason == podDeleted || e.Reason == EvictionDeleted
}

// CheckKarpenterConsolidation checks, on api, that Karpenter consolidates
// the node of a one-replica Deployment that surge opts in to the surge
// interceptor without the Deployment ever losing its ready replica, in a
// namespace opted in to the eviction API bridge. Karpenter launches one
// node for a filler, and the Deployment's pod joins it; once the filler is
// deleted, the node is underutilized and Karpenter replaces it with a
// cheaper one. Its
// evictions of the pod are refused with 429 until the surge's replacement
// (ready 3 seconds after it starts) is Ready; then the old pod goes, the
// node is deleted, and the pod's request completes. Without the bridge,
// Karpenter's first eviction goes through at once and the Deployment has
// no ready replica until the replacement loads.
func (f *Framework) CheckKarpenterConsolidation(t *testing.T, api evictionapi.API, surge func(*appsv1.Deployment)) {
	t.Helper()
	ns := f.NewNamespace(t)
	f.OptInToTheBridge(t, ns)
	f.KarpenterNodePool(t, ns, localcluster.KarpenterNodePoolOptions{ConsolidateAfter: "5s", Budget: "1"})
	// The filler first, alone: Karpenter launches a medium node for it.
	// db, created once the filler runs, fits beside it, and kube-scheduler
	// puts it there. Created together, the two Deployments' pods reached
	// Karpenter 4 seconds apart on a loaded machine, in two batches, and
	// got a node each. Both select the test's NodePool, so that neither
	// lands on another test's node.
	inPool := func(dep *appsv1.Deployment) {
		dep.Spec.Template.Spec.NodeSelector = map[string]string{localcluster.NodePoolLabel: ns}
	}
	f.CreateDeployment(t, ns, "filler", 1, "", OnKarpenterPool("3", inPool))
	f.CreateDeployment(t, ns, "db", 1, "", OnKarpenterPool("500m", func(dep *appsv1.Deployment) {
		inPool(dep)
		surge(dep)
		if dep.Spec.Template.Annotations == nil {
			dep.Spec.Template.Annotations = map[string]string{}
		}
		dep.Spec.Template.Annotations[localcluster.ReadyAfterAnnotation] = "3s"
	}))
	original, filler := f.PodsOf(t, ns, "db")[0], f.PodsOf(t, ns, "filler")[0]
	if original.Spec.NodeName != filler.Spec.NodeName {
		t.Fatalf("Karpenter put db on %s and the filler on %s; the test needs one node of both", original.Spec.NodeName, filler.Spec.NodeName)
	}
	end := f.FollowRequest(t, api, &original)
	deployment := f.WatchDeployment(t, ns, "db")
	pods := f.WatchReady(t, ns, "db")

	if err := f.Kube.AppsV1().Deployments(ns).Delete(t.Context(), "filler", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForNodeGone(t, original.Spec.NodeName, KarpenterTimeout)
	f.WaitForReplicas(t, ns, "db", 1)
	pods.Stop()

	if minReady, versions := deployment.MinReady(t); minReady < 1 {
		t.Errorf("the Deployment had %d ready replicas at its fewest, in %d versions seen; want 1 throughout", minReady, versions)
	}
	if minReady, _ := pods.Extremes(); minReady < 1 {
		t.Errorf("the fewest Ready pods of the Deployment: %d, want 1", minReady)
	}
	replacement := f.PodsOf(t, ns, "db")
	if len(replacement) != 1 || replacement[0].UID == original.UID {
		t.Fatalf("pods after the consolidation: %v, want one replacement", PodNames(replacement))
	}
	f.checkKarpenterRefusedUntil(t, &original, readySince(&replacement[0]))
	f.checkRequestedBy(t, ns, localcluster.KarpenterUser)
	got := f.waitForRequestEnd(t, end)
	if !endedWithThePod(got) {
		t.Errorf("the request of pod %s ended with %s, want the pod's deletion", original.Name, got)
	}
}

// readySince is when pod became Ready, to the second.
func readySince(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// checkKarpenterRefusedUntil checks, in kube-apiserver's audit log, that
// every eviction of pod was Karpenter's, at least one refused with 429
// before ready and none granted before it (ready is to the second, never
// later than the moment itself).
func (f *Framework) checkKarpenterRefusedUntil(t *testing.T, pod *corev1.Pod, ready time.Time) {
	t.Helper()
	evictions := f.AuditedEvictionsOf(t, pod.Namespace, pod.Name)
	t.Logf("evictions of pod %s (its replacement Ready at %s): %+v", pod.Name, ready.Format(time.RFC3339), evictions)
	refused := 0
	for _, e := range evictions {
		switch {
		case e.User != localcluster.KarpenterUser:
			t.Errorf("an eviction of pod %s by %s; only Karpenter evicts in this test", pod.Name, e.User)
		case e.Code == http.StatusTooManyRequests && e.Time.Before(ready):
			refused++
		case e.Code == http.StatusCreated && e.Time.Before(ready):
			t.Errorf("Karpenter's eviction of pod %s was granted at %s, before its replacement was Ready at %s", pod.Name, e.Time, ready)
		}
	}
	if refused == 0 {
		t.Errorf("no eviction of pod %s by Karpenter was refused with 429 before its replacement was Ready: %+v", pod.Name, evictions)
	}
}

// checkRequestedBy checks that the eviction API bridge recorded user as the
// caller of an eviction in ns.
func (f *Framework) checkRequestedBy(t *testing.T, ns, user string) {
	t.Helper()
	events, err := f.Kube.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", bridge.EventRequestedThroughEvictionAPI).String()})
	if err != nil {
		t.Fatal(err)
	}
	want := "Requested through the eviction API by " + user + "."
	for _, e := range events.Items {
		if e.Message == want {
			return
		}
	}
	t.Errorf("no event %s says %q: %v", bridge.EventRequestedThroughEvictionAPI, want, events.Items)
}

// waitForRequestEnd waits until the followed request ended, and returns how.
func (f *Framework) waitForRequestEnd(t *testing.T, end func() RequestEnd) RequestEnd {
	t.Helper()
	Eventually(t, DefaultTimeout, "the request to end", func(context.Context) error {
		if got := end(); got.Reason == "" {
			return fmt.Errorf("%s", got)
		}
		return nil
	})
	return end()
}

// podGracePeriodBeforeTermination is the terminationGracePeriodSeconds of
// the pod of CheckKarpenterWaitsForAParticipantThatNeverAnswers: Karpenter
// deletes it that long before its node's terminationGracePeriod runs out.
// With 1 second, a loaded machine's Karpenter reconciled the node after
// the node's own deadline, deleted the node, and the pod went with it
// (PodGC), never deleted by Karpenter's rule.
const podGracePeriodBeforeTermination = 10

// CheckKarpenterWaitsForAParticipantThatNeverAnswers checks, on api, that
// Karpenter's drain of a node it disrupts (drift: the NodePool's template
// changes) waits for an interceptor (responder) that never answers, holder,
// which hold opts a one-replica Deployment's pods in to, in a namespace
// opted in to the eviction API bridge. Without a terminationGracePeriod
// the pod and its node stay, Karpenter's evictions refused with 429, none
// granted. With one, Karpenter's own rule deletes the pod when it runs
// out, less the pod's own grace period (podGracePeriodBeforeTermination):
// the request ends because the pod was deleted, at the holder's
// uncompleted turn, and no eviction was ever granted.
func (f *Framework) CheckKarpenterWaitsForAParticipantThatNeverAnswers(t *testing.T, api evictionapi.API, holder string, hold func(*appsv1.Deployment), terminationGracePeriod string) {
	t.Helper()
	ns := f.NewNamespace(t)
	f.OptInToTheBridge(t, ns)
	f.KarpenterNodePool(t, ns, localcluster.KarpenterNodePoolOptions{TerminationGracePeriod: terminationGracePeriod})
	f.CreateDeployment(t, ns, "db", 1, "", OnKarpenterPool("500m", func(dep *appsv1.Deployment) {
		hold(dep)
		dep.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](podGracePeriodBeforeTermination)
	}))
	original := f.PodsOf(t, ns, "db")[0]
	end := f.FollowRequest(t, api, &original)
	f.PatchNodePool(t, ns, map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"labels": map[string]any{"e2e.evictionrequest.example.com/drifted": "true"}}}}})
	Eventually(t, KarpenterTimeout, "Karpenter to evict pod "+original.Name, func(context.Context) error {
		for _, e := range f.AuditedEvictionsOf(t, ns, original.Name) {
			if e.User == localcluster.KarpenterUser && e.Code == http.StatusTooManyRequests {
				return nil
			}
		}
		return fmt.Errorf("no eviction of Karpenter's refused yet")
	})
	if terminationGracePeriod == "" {
		Consistently(t, 30*time.Second, "pod "+original.Name+" and its node to stay", func(ctx context.Context) error {
			return f.stays(ctx, &original)
		})
	} else {
		f.WaitForPodGone(t, ns, original.Name)
		// Karpenter's event may reach kube-apiserver after the deletion.
		Eventually(t, DefaultTimeout, "Karpenter to record its deletion of pod "+original.Name, func(context.Context) error {
			if deleted := f.EventMessages(t, ns, "Pod", original.Name, "Disrupted"); !strings.Contains(deleted, "Deleting the pod to accommodate the terminationTime") {
				return fmt.Errorf("no deletion at its terminationGracePeriod among its Disrupted events: %q", deleted)
			}
			return nil
		})
		f.WaitForNodeGone(t, original.Spec.NodeName, KarpenterTimeout)
	}
	for _, e := range f.AuditedEvictionsOf(t, ns, original.Name) {
		if e.Code == http.StatusCreated {
			t.Errorf("an eviction of pod %s was granted behind its holder: %+v", original.Name, e)
		}
	}
	got := end()
	if terminationGracePeriod != "" {
		got = f.waitForRequestEnd(t, end)
	}
	ended := terminationGracePeriod != ""
	if !got.Seen || got.Turn != holder || got.TurnCompleted || endedWithThePod(got) != ended || (!ended && got.Reason != "") {
		t.Errorf("the request of pod %s: %s; want it at %s's uncompleted turn, ended by the pod's deletion: %t", original.Name, got, holder, ended)
	}
}

// stays fails unless pod is still there, not terminating, on its node,
// which is still there too.
func (f *Framework) stays(ctx context.Context, pod *corev1.Pod) error {
	got, err := f.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got.UID != pod.UID || got.DeletionTimestamp != nil {
		return fmt.Errorf("pod %s was replaced or is being deleted", pod.Name)
	}
	if _, err := f.Kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("node %s: %w", pod.Spec.NodeName, err)
	}
	return nil
}

// CheckKarpenterAndDeclarativeDrainBudgets checks that Karpenter's
// disruption budget (nodes: "1") and the declarative node drain's budget
// of the pool on karpenter.sh/nodepool (PoolDrainBudget) both hold when
// they act on the same NodePool at once: Karpenter replaces its three
// drifted nodes while an admin marks the same three for drain. Karpenter
// never disrupts more than one node at once, the drain never drains more
// than its budget, and neither waits for the other for ever: every node
// is gone in the end, the drain's queue is empty, and the Deployment is
// whole again.
func (f *Framework) CheckKarpenterAndDeclarativeDrainBudgets(t *testing.T) {
	t.Helper()
	ns := f.NewNamespace(t)
	f.KarpenterNodePool(t, ns, localcluster.KarpenterNodePoolOptions{Budget: "1"})
	const replicas = 3
	f.CreateDeployment(t, ns, "app", replicas, "", OnKarpenterPool("1", func(dep *appsv1.Deployment) {
		// One pod per node: three nodes to disrupt.
		dep.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}}
	}))
	var nodes []string
	for _, pod := range f.PodsOf(t, ns, "app") {
		nodes = append(nodes, pod.Spec.NodeName)
	}
	seen := f.WatchPoolDrains(t, ns)
	f.PatchNodePool(t, ns, map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"labels": map[string]any{"e2e.evictionrequest.example.com/drifted": "true"}}}}})
	for _, node := range nodes {
		f.MarkForDrain(t, node, true)
	}
	for _, node := range nodes {
		f.WaitForNodeGone(t, node, KarpenterTimeout)
	}
	f.WaitForReplicas(t, ns, "app", replicas)
	got := seen()
	t.Logf("at once: %d nodes disrupted by Karpenter, %d drained; queued: %v", got.MaxDisrupted, got.MaxDraining, got.Queued)
	if got.MaxDisrupted != 1 {
		t.Errorf("Karpenter disrupted at most %d nodes of the pool at once, want its budget, 1", got.MaxDisrupted)
	}
	if got.MaxDraining > PoolDrainBudget {
		t.Errorf("the declarative drain drained %d nodes of the pool at once, more than its budget, %d", got.MaxDraining, PoolDrainBudget)
	}
	// A node seen queued while cordoned is CheckDeclarativeDrainPoolBudget's
	// to fail on, not a budget: beside Karpenter, one node was once seen
	// queued again, cordoned, around the time Karpenter deleted it.
	for _, err := range got.Errs {
		t.Logf("seen: %v", err)
	}
	left, err := f.Kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{LabelSelector: PoolLabel + "=" + ns})
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range left.Items {
		if c := drain.FindNodeCondition(&node, corev1.NodeDrainInProgress); c != nil && c.Status == corev1.ConditionTrue {
			t.Errorf("node %s, which nobody marked for drain, drains: %s", node.Name, c.Message)
		}
	}
}

// KarpenterNodeRepair is the setting of a suite's Karpenter
// (localcluster.Config.KarpenterEnv) that CheckKarpenterGivesUpAtARebootsDeadline
// needs: its node repair, off by default.
const KarpenterNodeRepair = "FEATURE_GATES=NodeRepair=true"

// KarpenterRebootCondition is the node condition on which Karpenter's KWOK
// provider reboots a node (with the NodeRepair feature gate), draining it
// for at most a minute first (the terminationGracePeriod of its reboot
// policy).
const KarpenterRebootCondition corev1.NodeConditionType = "KWOKRebootRequired"

// CheckKarpenterGivesUpAtARebootsDeadline checks, on api, that a disruption
// Karpenter calls off leaves nothing requested once the eviction API
// bridge's inactivity time-out, inactivity, passes: Karpenter's KWOK
// provider reboots a node whose KarpenterRebootCondition is True, draining
// it for at most a minute; the eviction of a pod whose interceptor
// (responder) holder never answers is refused until then, Karpenter stops
// asking and reboots the node with the pod on it, and the bridge, asked no
// more, withdraws: the request ends with withdrawn (our API's Canceled, or
// the Eviction's Failed reason), at least inactivity after Karpenter's
// last eviction, and the pod stays. The suite's Karpenter needs its
// NodeRepair feature gate.
func (f *Framework) CheckKarpenterGivesUpAtARebootsDeadline(t *testing.T, api evictionapi.API, holder string, hold func(*appsv1.Deployment), inactivity time.Duration, withdrawn string) {
	t.Helper()
	ns := f.NewNamespace(t)
	f.OptInToTheBridge(t, ns)
	f.KarpenterNodePool(t, ns, localcluster.KarpenterNodePoolOptions{})
	f.CreateDeployment(t, ns, "db", 1, "", OnKarpenterPool("500m", hold))
	original := f.PodsOf(t, ns, "db")[0]
	node := original.Spec.NodeName
	bootID := f.WaitForNode(t, node, "a node", func(*corev1.Node) error { return nil }).Status.NodeInfo.BootID
	end := f.FollowRequest(t, api, &original)
	// True for longer than the policy's 30 seconds already: Karpenter
	// reboots the node at its next look.
	f.setNodeCondition(t, node, KarpenterRebootCondition, corev1.ConditionTrue, time.Now().Add(-time.Minute))
	// Karpenter drains the node for up to a minute first, and a loaded
	// machine's Karpenter took more than DefaultTimeout in all.
	Eventually(t, KarpenterTimeout, "Karpenter to reboot node "+node, func(ctx context.Context) error {
		n, err := f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err == nil && n.Status.NodeInfo.BootID == bootID {
			err = fmt.Errorf("boot ID %q", bootID)
		}
		return err
	})
	// Rebooted once: asked no more.
	f.setNodeCondition(t, node, KarpenterRebootCondition, corev1.ConditionFalse, time.Now())
	got := f.waitForRequestEnd(t, end)
	if got.Reason != withdrawn {
		t.Errorf("the request of pod %s ended with %s, want %s", original.Name, got, withdrawn)
	}
	var last time.Time
	refused := 0
	for _, e := range f.AuditedEvictionsOf(t, ns, original.Name) {
		switch {
		case e.Code == http.StatusCreated:
			t.Errorf("an eviction of pod %s was granted behind its holder: %+v", original.Name, e)
		case e.User == localcluster.KarpenterUser && e.Code == http.StatusTooManyRequests:
			refused++
			last = e.Time
		}
	}
	if refused == 0 {
		t.Errorf("Karpenter's reboot evicted pod %s not once", original.Name)
	}
	// The bridge's clock starts when it answers, a moment before
	// kube-apiserver records the answer; it withdraws between inactivity
	// and a quarter more after the last call (it records calls at most
	// that often).
	if got.At.Before(last.Add(inactivity - time.Second)) {
		t.Errorf("the request ended at %s, less than %s after Karpenter's last eviction at %s", got.At, inactivity, last)
	}
	if err := f.stays(t.Context(), &original); err != nil {
		t.Errorf("after the reboot: %v", err)
	}
}

// setNodeCondition sets the condition of the node name, as a node problem
// detector reports one.
func (f *Framework) setNodeCondition(t *testing.T, name string, conditionType corev1.NodeConditionType, status corev1.ConditionStatus, since time.Time) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
		Type: conditionType, Status: status, Reason: "E2E", Message: "set by the test",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.NewTime(since),
	}}}})
	if _, err := f.Kube.CoreV1().Nodes().PatchStatus(t.Context(), name, patch); err != nil {
		t.Fatal(err)
	}
}
