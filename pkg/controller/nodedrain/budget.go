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

// The budgets of nodes drained at once: the cluster's
// (Options.MaxConcurrentDrains) and each pool's (Options.PoolBudget, the
// nodes sharing a value of Options.PoolLabel). An admin's or a maintenance
// tool's drain starts only while both its budgets have room; the others
// wait, oldest first, shown on their Node as DrainInProgress=False with
// reason EvictionRequestNodeDrainQueued and their place in the queue. A
// drain held by its full pool lets a younger one of another pool start:
// the queue does not block on one pool. A waiting node is not cordoned: the
// pods the running drains evict need somewhere to go. Drains for a graceful
// shutdown neither wait nor count: the node goes anyway.

// budgeted is true when a budget limits the drains that run at once.
func (c *Controller) budgeted() bool {
	return c.opts.MaxConcurrentDrains > 0 || (c.opts.PoolLabel != "" && c.opts.PoolBudget.IsSet())
}

// admit reports whether the drain of node may run now, and if not where it
// waits.
func (c *Controller) admit(node *corev1.Node, state nodeState) (bool, hold) {
	if !c.budgeted() || !state.requested() {
		return true, hold{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holdsPlace(node) {
		c.take(node.Name)
		return true, hold{}
	}
	// A drain that completed keeps its place: pods that land on the node
	// later are requested without waiting. The controller knows of its
	// completion before the cache shows Drained=True: a sync in between
	// (another release's wake-up) must not queue a drained node again.
	if c.completed[node.Name] || drain.IsNodeConditionTrue(node, corev1.NodeDrained) {
		return true, hold{}
	}
	nodes, _ := c.nodeLister.List(labels.Everything())
	q := c.budgetViewOf(nodes, node)
	h := q.place(node.Name)
	if h.position > 0 {
		return false, h
	}
	c.take(node.Name)
	// The nodes behind it move up: their conditions show it.
	if waitsForBudget(node) {
		for _, w := range q.waiting {
			if w.name != node.Name {
				c.queue.Add(w.name)
			}
		}
	}
	return true, hold{}
}

// holdsPlace is true for a node whose drain holds a place in the budgets:
// by the controller's memory, or, after a restart, by its condition, unless
// the controller released it since and the cache lags. Called with c.mu
// held.
func (c *Controller) holdsPlace(node *corev1.Node) bool {
	if c.draining[node.Name] {
		return true
	}
	if !isDraining(node) {
		// The cache caught up with the release.
		delete(c.released, node.Name)
		return false
	}
	return !c.released[node.Name]
}

// take gives node's drain a place in the budgets. Called with c.mu held.
func (c *Controller) take(node string) {
	c.draining[node] = true
	delete(c.released, node)
}

// budgetViewOf reads the budgets' view of nodes, with node, which is not
// draining, among the waiting. Called with c.mu held.
func (c *Controller) budgetViewOf(nodes []*corev1.Node, node *corev1.Node) *budgetView {
	now := c.clock.Now()
	q := &budgetView{
		clusterBudget: c.opts.MaxConcurrentDrains,
		poolBudget:    c.opts.PoolBudget,
		poolRunning:   map[string]int{},
		poolSize:      map[string]int{},
		waiting:       []waitingDrain{{name: node.Name, pool: c.poolOf(node), since: waitingSince(node, now)}},
	}
	for _, n := range nodes {
		pool := c.poolOf(n)
		q.poolSize[pool]++
		switch {
		case n.Name == node.Name:
		case c.holdsPlace(n):
			q.running++
			q.poolRunning[pool]++
		case waitsForBudget(n):
			q.waiting = append(q.waiting, waitingDrain{name: n.Name, pool: pool, since: waitingSince(n, now)})
		}
	}
	sort.Slice(q.waiting, func(i, j int) bool {
		if !q.waiting[i].since.Equal(q.waiting[j].since) {
			return q.waiting[i].since.Before(q.waiting[j].since)
		}
		return q.waiting[i].name < q.waiting[j].name
	})
	return q
}

// poolOf is the pool of node: its value of the pool label; "" is none.
func (c *Controller) poolOf(node *corev1.Node) string {
	if c.opts.PoolLabel == "" || !c.opts.PoolBudget.IsSet() {
		return ""
	}
	return node.Labels[c.opts.PoolLabel]
}

// isDraining is true for a node whose drain, by its condition, runs.
func isDraining(node *corev1.Node) bool {
	c := drain.FindNodeCondition(node, corev1.NodeDrainInProgress)
	return c != nil && c.Status == corev1.ConditionTrue && c.Reason == ReasonDrainStarted
}

// waitsForBudget is true for a node whose drain, by its condition, waits.
func waitsForBudget(node *corev1.Node) bool {
	c := drain.FindNodeCondition(node, corev1.NodeDrainInProgress)
	return c != nil && c.Reason == ReasonDrainQueued
}

// waitingSince is when node started waiting: its queued condition's
// transition, else now.
func waitingSince(node *corev1.Node, now time.Time) time.Time {
	if c := drain.FindNodeCondition(node, corev1.NodeDrainInProgress); c != nil && c.Reason == ReasonDrainQueued {
		return c.LastTransitionTime.Time
	}
	return now
}

// waitingRecheck is how often a waiting drain looks at the budgets again
// even if no release wakes it: a node deleted while it drains, or a cache
// that lagged behind a release, cannot leave it waiting for ever.
const waitingRecheck = 15 * time.Second

// wait reports on the Node that its drain waits for a budget.
func (c *Controller) reportWaiting(ctx context.Context, node *corev1.Node, h hold) error {
	budget := fmt.Sprintf("%d drains at once are running, the budget (--max-concurrent-node-drains)", c.opts.MaxConcurrentDrains)
	if h.pool != "" {
		budget = fmt.Sprintf("%d drains at once are running in pool %s=%s, its budget (--max-concurrent-node-drains-per-pool=%s)",
			h.poolBudget, c.opts.PoolLabel, h.pool, c.opts.PoolBudget)
	}
	message := fmt.Sprintf("Queued: %s; position %d in the queue. The node is not cordoned yet.", budget, h.position)
	return c.writeConditions(ctx, node, drain.DrainConditions(false, false, ReasonDrainQueued, message))
}

// complete frees the budget's slot of node, whose drain completed, and
// remembers the completion until the node's drain is forgotten.
func (c *Controller) complete(node string) {
	c.mu.Lock()
	c.completed[node] = true
	c.mu.Unlock()
	c.release(node)
}

// release frees the budget's slot of node, whose drain is done or ended,
// and wakes the nodes that wait for one.
func (c *Controller) release(node string) {
	c.mu.Lock()
	held := c.draining[node]
	delete(c.draining, node)
	if held {
		c.released[node] = true
	}
	c.mu.Unlock()
	if !held || !c.budgeted() {
		return
	}
	nodes, _ := c.nodeLister.List(labels.Everything())
	for _, n := range nodes {
		if waitsForBudget(n) {
			c.queue.Add(n.Name)
		}
	}
}
