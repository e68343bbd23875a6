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

// Package check reads the history of a fault campaign (package history's
// record and kube-apiserver's audit log) and reports, for each invariant a
// drain must keep under faults, how many cases it checked and which broke
// it. It reads either API: our coordination.k8s.io EvictionRequests, or
// lifecycle.k8s.io's EvictionRequests and Evictions; both become the same
// states of each pod's eviction (turnState) before any invariant is
// checked. It decides from the record alone: what the objects were as a watch
// saw them, in the order the watch saw them, and what kube-apiserver says it
// granted, never from the code under test.
package check

import (
	"fmt"
	"sort"
	"time"

	"github.com/evictionrequest/apiserver/internal/faults/history"
)

// The invariants, in the order Report lists them.
const (
	TurnHeld        = "no pod ended while a participant held its turn"
	BudgetKept      = "no PodDisruptionBudget driven below its minimum"
	EvictedOnce     = "no pod evicted twice"
	RequestSettled  = "every request terminal or waiting on a silent participant"
	RequestKept     = "no request lost or duplicated"
	DrainEnded      = "every drain ends"
	ReplicaReady    = "one-replica Deployments never at zero ready"
	WritesBounded   = "writes per request bounded"
	defaultMaxWrite = 60
)

// invariants is every invariant, in report order.
var invariants = []string{TurnHeld, BudgetKept, EvictedOnce, RequestSettled, RequestKept, DrainEnded, ReplicaReady, WritesBounded}

// Options tune the checker to the campaign that made the history.
type Options struct {
	// SilentParticipants are participants (our API's interceptors,
	// lifecycle.k8s.io's responders) that never answer: a pod's eviction
	// whose turn they hold at the end is still correctly waiting.
	SilentParticipants []string
	// MaxWritesPerRequest bounds the writes one EvictionRequest or Eviction
	// may see (its creation excluded); more is a write loop. 0 means 60.
	MaxWritesPerRequest int
}

// Result is one invariant's outcome.
type Result struct {
	// Invariant is one of the constants above.
	Invariant string
	// Checked counts the cases the invariant was checked on (pods,
	// requests, drains...).
	Checked int
	// Inconclusive counts the cases the record cannot decide, because a
	// watch lost events there (a Gap).
	Inconclusive int
	// Violations say what broke the invariant, one line each.
	Violations []string
}

// Report is the outcome of every invariant.
type Report struct {
	Results []Result
}

// Violations counts the violations of every invariant.
func (r Report) Violations() int {
	n := 0
	for _, res := range r.Results {
		n += len(res.Violations)
	}
	return n
}

// Check checks every invariant on a history: the campaign's record and the
// events of kube-apiserver's audit log.
func Check(entries []history.Entry, audit []AuditEvent, opts Options) (Report, error) {
	if opts.MaxWritesPerRequest == 0 {
		opts.MaxWritesPerRequest = defaultMaxWrite
	}
	h, err := index(entries)
	if err != nil {
		return Report{}, err
	}
	results := map[string]*Result{}
	for _, name := range invariants {
		results[name] = &Result{Invariant: name}
	}
	evicted := evictedPods(audit)
	checkTurns(h, evicted, results[TurnHeld])
	checkSkipped(h, audit, evicted, results[TurnHeld])
	checkBudgets(h, results[BudgetKept])
	checkEvictedOnce(h, audit, results[EvictedOnce])
	checkSettled(h, opts, results[RequestSettled])
	checkRequestsKept(h, results[RequestKept])
	checkDrains(h, results[DrainEnded])
	checkReplicas(h, results[ReplicaReady])
	checkWrites(h, opts, results[WritesBounded])
	report := Report{}
	for _, name := range invariants {
		sort.Strings(results[name].Violations)
		report.Results = append(report.Results, *results[name])
	}
	return report, nil
}

func (r *Result) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// stamp formats a time of the record for a violation's line.
func stamp(t time.Time) string {
	return t.UTC().Format("15:04:05.000")
}
