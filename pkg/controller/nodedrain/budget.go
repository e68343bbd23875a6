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
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// The budget of nodes drained at once (Options.MaxConcurrentDrains): an
// admin's or a maintenance tool's drain starts only while fewer drains than
// the budget are in progress; the others wait, oldest first, shown on their
// Node as DrainInProgress=False with reason EvictionRequestNodeDrainQueued
// and their place in the queue. A waiting node is not cordoned: the pods
// the running drains evict need somewhere to go. Drains for a graceful
// shutdown neither wait nor count: the node goes anyway.

// admit reports whether the drain of node may run now, and if not its
// position in the queue (1 is next).
func (c *Controller) admit(node *corev1.Node, state nodeState) (bool, int) {
	if c.opts.MaxConcurrentDrains <= 0 || !state.requested() {
		return true, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining[node.Name] || isDraining(node) {
		c.draining[node.Name] = true
		return true, 0
	}
	// A drain that completed keeps its place: pods that land on the node
	// later are requested without waiting.
	if drain.IsNodeConditionTrue(node, corev1.NodeDrained) {
		return true, 0
	}
	running, waiting := 0, []queued{{name: node.Name, since: queuedSince(node, c.clock.Now())}}
	nodes, _ := c.nodeLister.List(labels.Everything())
	for _, n := range nodes {
		if n.Name == node.Name {
			continue
		}
		switch {
		case c.draining[n.Name] || isDraining(n):
			running++
		case isQueued(n):
			waiting = append(waiting, queued{name: n.Name, since: queuedSince(n, c.clock.Now())})
		}
	}
	sort.Slice(waiting, func(i, j int) bool {
		if !waiting[i].since.Equal(waiting[j].since) {
			return waiting[i].since.Before(waiting[j].since)
		}
		return waiting[i].name < waiting[j].name
	})
	position := 0
	for i, w := range waiting {
		if w.name == node.Name {
			position = i + 1
		}
	}
	if position <= c.opts.MaxConcurrentDrains-running {
		c.draining[node.Name] = true
		// The nodes behind it move up: their conditions show it.
		if isQueued(node) {
			for _, w := range waiting {
				if w.name != node.Name {
					c.queue.Add(w.name)
				}
			}
		}
		return true, 0
	}
	return false, position
}

// queued is a node waiting for the budget, since when.
type queued struct {
	name  string
	since time.Time
}

// isDraining is true for a node whose drain, by its condition, runs.
func isDraining(node *corev1.Node) bool {
	c := drain.FindNodeCondition(node, corev1.NodeDrainInProgress)
	return c != nil && c.Status == corev1.ConditionTrue && c.Reason == drain.ReasonNodeDrainStarted
}

// isQueued is true for a node whose drain, by its condition, waits.
func isQueued(node *corev1.Node) bool {
	c := drain.FindNodeCondition(node, corev1.NodeDrainInProgress)
	return c != nil && c.Reason == drain.ReasonNodeDrainQueued
}

// queuedSince is when node started waiting: its queued condition's
// transition, else now.
func queuedSince(node *corev1.Node, now time.Time) time.Time {
	if c := drain.FindNodeCondition(node, corev1.NodeDrainInProgress); c != nil && c.Reason == drain.ReasonNodeDrainQueued {
		return c.LastTransitionTime.Time
	}
	return now
}

// wait reports on the Node that its drain waits for the budget.
func (c *Controller) wait(ctx context.Context, node *corev1.Node, position int) error {
	message := fmt.Sprintf("Queued: %d drains at once are running, the budget (--max-concurrent-node-drains); position %d in the queue. The node is not cordoned yet.",
		c.opts.MaxConcurrentDrains, position)
	return c.writeConditions(ctx, node, drain.DrainConditions(false, false, drain.ReasonNodeDrainQueued, message))
}

// release frees the budget's slot of node, whose drain is done or ended,
// and wakes the nodes that wait for one.
func (c *Controller) release(node string) {
	c.mu.Lock()
	held := c.draining[node]
	delete(c.draining, node)
	c.mu.Unlock()
	if !held || c.opts.MaxConcurrentDrains <= 0 {
		return
	}
	nodes, _ := c.nodeLister.List(labels.Everything())
	for _, n := range nodes {
		if isQueued(n) {
			c.queue.Add(n.Name)
		}
	}
}
