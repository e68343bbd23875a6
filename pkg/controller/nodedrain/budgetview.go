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
	"math"
	"time"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// budgetView is what the budgets see of the nodes: the drains that run, in
// the cluster and in each pool, each pool's size, and the drains that wait,
// oldest first.
type budgetView struct {
	clusterBudget int
	poolBudget    drain.NodeBudget
	running       int
	poolRunning   map[string]int
	poolSize      map[string]int
	waiting       []waitingDrain
}

// waitingDrain is a node waiting for the budgets, since when, and its pool.
type waitingDrain struct {
	name  string
	pool  string
	since time.Time
}

// hold is where a drain waits: its position in the queue (1 is next) and,
// when its pool's budget holds it, the pool and that budget.
type hold struct {
	position   int
	pool       string
	poolBudget int
}

// place admits the waiting drains in their order while their budgets have
// room, and returns where the drain of name stands: position 0 if it is
// admitted.
func (q *budgetView) place(name string) hold {
	free := math.MaxInt
	if q.clusterBudget > 0 {
		free = q.clusterBudget - q.running
	}
	admitted := map[string]int{}
	poolFree := func(pool string) int {
		if pool == "" {
			return math.MaxInt
		}
		return q.poolBudget.Of(q.poolSize[pool]) - q.poolRunning[pool] - admitted[pool]
	}
	position := 0
	for _, w := range q.waiting {
		if free > 0 && poolFree(w.pool) > 0 {
			if w.name == name {
				return hold{}
			}
			free--
			admitted[w.pool]++
			continue
		}
		position++
		if w.name == name {
			h := hold{position: position}
			if poolFree(w.pool) <= 0 {
				h.pool, h.poolBudget = w.pool, q.poolBudget.Of(q.poolSize[w.pool])
			}
			return h
		}
	}
	return hold{}
}
