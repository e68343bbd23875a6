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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// syncNode syncs the node name and copies it into the cache.
func (f *fixture) syncNode(name string) *corev1.Node {
	f.t.Helper()
	if _, err := f.controller.sync(f.ctx, name); err != nil {
		f.t.Fatalf("sync %s: %v", name, err)
	}
	node, err := f.kube.CoreV1().Nodes().Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.nodes.Update(node); err != nil {
		f.t.Fatal(err)
	}
	f.refreshRequests()
	return node
}

// With a budget of one drain at once, three marked nodes drain one after
// another, oldest first: the others wait uncordoned, their place shown on
// the Node, and the next starts once the running drain completes.
func TestTheBudgetDrainsOneNodeAtATime(t *testing.T) {
	f := newFixtureWith(t, Options{MaxConcurrentDrains: 1})
	names := []string{"node-a", "node-b", "node-c"}
	for _, name := range names {
		f.add(wrappers.MakeNode(name).Annotation(DrainAnnotation, "true").Annotation(ForceAnnotation, "true").Obj(),
			wrappers.MakePod("web-"+name).Node(name).Obj())
	}
	a := f.syncNode("node-a")
	f.clock.Step(time.Second)
	b := f.syncNode("node-b")
	f.clock.Step(time.Second)
	c := f.syncNode("node-c")
	if !a.Spec.Unschedulable || b.Spec.Unschedulable || c.Spec.Unschedulable {
		t.Errorf("cordoned: a %v, b %v, c %v; want only the running drain's node", a.Spec.Unschedulable, b.Spec.Unschedulable, c.Spec.Unschedulable)
	}
	for node, position := range map[*corev1.Node]string{b: "position 1", c: "position 2"} {
		cond := drain.FindNodeCondition(node, corev1.NodeDrainInProgress)
		if cond == nil || cond.Reason != ReasonDrainQueued || !strings.Contains(cond.Message, position) {
			t.Errorf("%s: DrainInProgress = %+v, want queued at %s", node.Name, cond, position)
		}
	}
	if got := f.requesters(); len(got) != 1 || len(got["web-node-a"]) != 1 {
		t.Errorf("requests %v, want node-a's pod only", got)
	}

	// node-a's pod leaves and its request is collected: node-a is
	// drained, which wakes the queue; node-b, the oldest, starts.
	if err := f.pods.Delete(wrappers.MakePod("web-node-a").Obj()); err != nil {
		t.Fatal(err)
	}
	f.deleteRequest(wrappers.MakePod("web-node-a").Obj())
	f.syncNode("node-a")
	if f.controller.queue.Len() != 2 {
		t.Errorf("%d nodes enqueued once a drain completed, want the 2 waiting", f.controller.queue.Len())
	}
	f.syncNode("node-c")
	b = f.syncNode("node-b")
	c = f.syncNode("node-c")
	if !b.Spec.Unschedulable || c.Spec.Unschedulable {
		t.Errorf("after node-a: b cordoned %v, c cordoned %v; want b running, c waiting", b.Spec.Unschedulable, c.Spec.Unschedulable)
	}
	if cond := drain.FindNodeCondition(c, corev1.NodeDrainInProgress); cond == nil || !strings.Contains(cond.Message, "position 1") {
		t.Errorf("node-c: DrainInProgress = %+v, want position 1", cond)
	}
	if a := f.syncNode("node-a"); !drain.IsNodeConditionTrue(a, corev1.NodeDrained) {
		t.Errorf("the drained node-a lost its place: %+v", a.Status.Conditions)
	}
}

// A pool's budget holds only its own nodes: with one drain at once per
// pool and two in the cluster, the second node of pool a waits for its
// pool while a younger node of pool b starts; then the cluster's budget is
// spent and a node of no pool waits behind the first.
func TestAPoolsBudgetHoldsOnlyItsPool(t *testing.T) {
	budget, err := drain.ParseNodeBudget("50%")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureWith(t, Options{MaxConcurrentDrains: 2, PoolLabel: "pool", PoolBudget: budget})
	// b-2 is not marked: pool b has two nodes, so 50% is one drain too.
	pools := map[string]string{"a-1": "a", "a-2": "a", "b-1": "b", "b-2": "b", "none": ""}
	for name, pool := range pools {
		node := wrappers.MakeNode(name)
		if pool != "" {
			node = node.Label("pool", pool)
		}
		if name == "b-2" {
			f.add(node.Obj())
			continue
		}
		f.add(node.Annotation(DrainAnnotation, "true").Annotation(ForceAnnotation, "true").Obj(),
			wrappers.MakePod("web-"+name).Node(name).Obj())
	}
	got := map[string]*corev1.Node{}
	for _, name := range []string{"a-1", "a-2", "b-1", "none"} {
		got[name] = f.syncNode(name)
		f.clock.Step(time.Second)
	}
	for name, want := range map[string]string{"a-1": "", "a-2": "in pool pool=a, its budget (--max-concurrent-node-drains-per-pool=50%); position 1", "b-1": "",
		"none": "the budget (--max-concurrent-node-drains); position 2"} {
		cond := drain.FindNodeCondition(got[name], corev1.NodeDrainInProgress)
		if want == "" {
			if !got[name].Spec.Unschedulable || cond == nil || cond.Reason != ReasonDrainStarted {
				t.Errorf("%s: cordoned %v, DrainInProgress %+v; want its drain running", name, got[name].Spec.Unschedulable, cond)
			}
			continue
		}
		if got[name].Spec.Unschedulable || cond == nil || cond.Reason != ReasonDrainQueued || !strings.Contains(cond.Message, want) {
			t.Errorf("%s: cordoned %v, DrainInProgress %+v; want it queued: %q", name, got[name].Spec.Unschedulable, cond, want)
		}
	}
}

// A drain that completes gives its place back at once, even while the
// node cache still shows it draining: the waiting drain it wakes starts,
// rather than waiting again for a wake-up that already happened.
func TestAReleaseCountsBeforeTheCacheShowsIt(t *testing.T) {
	f := completedBehindTheCache(t)
	if b := f.syncNode("node-b"); !b.Spec.Unschedulable {
		t.Errorf("node-b still waits once node-a released its place: %+v", drain.FindNodeCondition(b, corev1.NodeDrainInProgress))
	}
}

// A drain that completed is not queued again while the node cache still
// shows it draining: a sync of its node in that moment (a pod's event, the
// wake-up of another release) leaves it drained and cordoned, although its
// place went to the next drain.
func TestACompletedDrainIsNotQueuedWhileTheCacheLags(t *testing.T) {
	f := completedBehindTheCache(t)
	// node-b takes the place and node-a is synced again, its cache still
	// showing it Started.
	f.syncNode("node-b")
	if _, err := f.controller.sync(f.ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	a, err := f.kube.CoreV1().Nodes().Get(f.ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := drain.FindNodeCondition(a, corev1.NodeDrainInProgress); c != nil && c.Reason == ReasonDrainQueued || !drain.IsNodeConditionTrue(a, corev1.NodeDrained) {
		t.Errorf("node-a, drained, was queued again while the cache lagged: %+v, Drained %v", drain.FindNodeCondition(a, corev1.NodeDrainInProgress), drain.FindNodeCondition(a, corev1.NodeDrained))
	}
}

// completedBehindTheCache is a fixture of two marked nodes under a budget
// of one drain at once: node-a's drain started, node-b waits, then node-a's
// drain completed while the node cache still shows its Started condition.
func completedBehindTheCache(t *testing.T) *fixture {
	t.Helper()
	f := newFixtureWith(t, Options{MaxConcurrentDrains: 1})
	for _, name := range []string{"node-a", "node-b"} {
		f.add(wrappers.MakeNode(name).Annotation(DrainAnnotation, "true").Annotation(ForceAnnotation, "true").Obj(),
			wrappers.MakePod("web-"+name).Node(name).Obj())
	}
	f.syncNode("node-a")
	f.clock.Step(time.Second)
	if b := f.syncNode("node-b"); b.Spec.Unschedulable {
		t.Fatal("node-b started beside node-a with a budget of one")
	}
	if err := f.pods.Delete(wrappers.MakePod("web-node-a").Obj()); err != nil {
		t.Fatal(err)
	}
	f.deleteRequest(wrappers.MakePod("web-node-a").Obj())
	if _, err := f.controller.sync(f.ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	return f
}
