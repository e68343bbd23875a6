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
	"slices"
	"sync"
	"testing"

	plugin "github.com/evictionrequest/apiserver/cmd/kubectl-evictionrequest/app"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// PoolDrainBudget is how many nodes of one test's pool (PoolLabel) the
// suite's declarative drain runs on at once. Nodes of no pool, which the
// other drain tests use, have no budget.
const PoolDrainBudget = 2

// NodeDrainArgs are the flags of the suite's declarative node drain: on,
// also for MaintenancePlanned, with a budget per test pool.
func NodeDrainArgs() []string {
	return []string{"--controllers=*,evictionrequest-node-drain", "--drain-on-maintenance-planned",
		"--node-drain-pool-label=" + PoolLabel, fmt.Sprintf("--max-concurrent-node-drains-per-pool=%d", PoolDrainBudget)}
}

// CheckDeclarativeDrainPoolBudget checks, on the API of the suite, that six
// nodes of one pool marked for drain at once never have more than the
// pool's budget draining (DrainInProgress=True), the others waiting
// uncordoned as queued, and that all six end Drained=True. A
// PodDisruptionBudget holds every pod, so each drain lasts until its
// deadline, 10 seconds after its start, deletes the pod.
func (f *Framework) CheckDeclarativeDrainPoolBudget(t *testing.T) {
	t.Helper()
	ns := f.NewNamespace(t)
	nodes := make([]string, 6)
	for i := range nodes {
		nodes[i] = f.PoolNode(t, ns)
		f.CreatePod(t, ns, fmt.Sprintf("db-%d", i), PodOptions{Node: nodes[i], Labels: map[string]string{"app": "db"}})
	}
	f.CreatePDB(t, ns, "db", int32(len(nodes)), int32(len(nodes)))

	seen := f.WatchPoolDrains(t, ns)
	for _, node := range nodes {
		// The suite's pods declare no controller: the drain may evict them.
		f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			nodedrain.DrainAnnotation: "true", nodedrain.ForceAnnotation: "true",
			drain.DeadlineAnnotation: "10s", drain.OnDeadlineAnnotation: string(drain.EscalateDelete)}}})
	}
	for _, node := range nodes {
		f.WaitForNode(t, node, "Drained=True", NodeConditionIs(corev1.NodeDrained, corev1.ConditionTrue, nodedrain.ReasonDrainCompleted, ""))
	}
	got := seen()
	if got.MaxDraining != PoolDrainBudget {
		t.Errorf("at most %d nodes of the pool drained at once, want the budget, %d", got.MaxDraining, PoolDrainBudget)
	}
	if len(got.Queued) < len(nodes)-PoolDrainBudget {
		t.Errorf("nodes seen queued: %v; want at least %d", got.Queued, len(nodes)-PoolDrainBudget)
	}
	for _, err := range got.Errs {
		t.Error(err)
	}
	for _, node := range nodes {
		f.MarkForDrain(t, node, false)
	}
}

// PoolDrains is what a watch of a pool's nodes saw of their drains.
type PoolDrains struct {
	// MaxDraining is the most nodes seen DrainInProgress=True at once.
	MaxDraining int
	// MaxDisrupted is the most nodes seen at once with Karpenter's taint
	// of a node it disrupts (localcluster.DisruptedTaint).
	MaxDisrupted int
	// Queued are the nodes seen waiting, by the declarative drain's or the
	// plugin's queued reason.
	Queued map[string]bool
	// Errs are what was seen wrong: a node the declarative drain cordoned
	// while it waits.
	Errs []error
}

// WatchPoolDrains watches the nodes of the pool (PoolLabel) of namespace ns until the
// test ends, and returns what it has seen so far: every version of every
// node, so that no moment with too many drains goes unseen. A deleted node
// no longer counts.
func (f *Framework) WatchPoolDrains(t *testing.T, ns string) func() PoolDrains {
	t.Helper()
	w, err := f.Kube.CoreV1().Nodes().Watch(t.Context(), metav1.ListOptions{LabelSelector: PoolLabel + "=" + ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	seen := PoolDrains{Queued: map[string]bool{}}
	draining, disrupted, reasons := map[string]bool{}, map[string]bool{}, map[string]string{}
	go func() {
		for event := range w.ResultChan() {
			node, ok := event.Object.(*corev1.Node)
			if !ok {
				continue
			}
			cond := drain.FindNodeCondition(node, corev1.NodeDrainInProgress)
			mu.Lock()
			if event.Type == watch.Deleted {
				delete(draining, node.Name)
				delete(disrupted, node.Name)
				mu.Unlock()
				continue
			}
			draining[node.Name] = cond != nil && cond.Status == corev1.ConditionTrue
			disrupted[node.Name] = slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == localcluster.DisruptedTaint })
			if cond != nil && (cond.Reason == nodedrain.ReasonDrainQueued || cond.Reason == plugin.ReasonDrainQueued) {
				seen.Queued[node.Name] = true
			}
			// A node the declarative drain queues is uncordoned; once
			// admitted it is cordoned before its condition says so.
			if cond != nil && cond.Reason == nodedrain.ReasonDrainQueued && reasons[node.Name] != cond.Reason {
				if node.Spec.Unschedulable {
					seen.Errs = append(seen.Errs, fmt.Errorf("node %s is cordoned while its drain waits", node.Name))
				}
			}
			if cond != nil {
				reasons[node.Name] = cond.Reason
			}
			n := 0
			for _, d := range draining {
				if d {
					n++
				}
			}
			seen.MaxDraining = max(seen.MaxDraining, n)
			n = 0
			for _, d := range disrupted {
				if d {
					n++
				}
			}
			seen.MaxDisrupted = max(seen.MaxDisrupted, n)
			mu.Unlock()
		}
	}()
	return func() PoolDrains {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// CheckDeclarativeEscalationThroughTheBridge checks, on the API of the
// suite, that the declarative drain's escalation gets through the eviction
// API bridge: a pod made as held says, whose interceptor or responder never
// answers, in a namespace opted in to the bridge, is evicted at the drain's
// deadline with evict, and the node ends Drained. The bridge answers 429
// while it is that participant's turn, but not to the drain's component:
// the overlay's webhook skips its identity (matchConditions) and the bridge
// exempts its own. With both switched off, the check fails.
func (f *Framework) CheckDeclarativeEscalationThroughTheBridge(t *testing.T, held PodOptions) {
	t.Helper()
	ns := f.NewNamespace(t)
	f.OptInToTheBridge(t, ns)
	held.Node = f.NewNode(t)
	pod := f.CreatePod(t, ns, "db-0", held)
	f.PatchNode(t, held.Node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		drain.DeadlineAnnotation: "10s", drain.OnDeadlineAnnotation: string(drain.EscalateEvict)}}})
	f.MarkForDrain(t, held.Node, true)
	f.WaitForPodGone(t, ns, pod.Name)
	f.WaitForNode(t, held.Node, "Drained=True", NodeConditionIs(corev1.NodeDrained, corev1.ConditionTrue, nodedrain.ReasonDrainCompleted, ""))
	f.MarkForDrain(t, held.Node, false)
}
