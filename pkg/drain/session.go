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

package drain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// Session is one drain of some nodes. It remembers the pods it asked to
// evict and when, so that it reports the pods that are gone, tells the pods
// that land on a node later from the first ones, and asks for a pod again
// only RetryAfter after the last time. Each Sync observes the caches,
// decides which pods need a request and writes them: a caller calls it on
// every change and when its report says a retry is due.
type Session struct {
	h     *Helper
	nodes []string
	// created is when the session started: the start of its drain.
	created time.Time
	// policy is what the session evicts beyond kubectl drain's defaults.
	policy Policy

	mu sync.Mutex
	// synced is true after the first Sync: pods found later landed late.
	synced  bool
	tracked map[types.UID]trackedPod
	// attempts is when each pod was last asked for.
	attempts map[types.UID]time.Time
	// blocked is what last made each blocked pod blocked, so that
	// OnBlocked is called once per change.
	blocked map[types.UID]string
	// deadline is the drain's deadline, if any; deadlineOnRequest is the
	// deadline (Deadline.key) the session wrote on each pod's request,
	// escalated the pods escalated since it passed (escalate.go).
	deadline          Deadline
	deadlineOnRequest map[types.UID]string
	escalated         map[types.UID]escalation
	// maxNodes limits the nodes drained at once; started are the nodes
	// whose pods the session requests, left their pods not done as the
	// last Sync counted them (waves.go).
	maxNodes int
	started  map[string]bool
	left     map[string]int
}

// trackedPod is a pod the session evicts.
type trackedPod struct {
	ref  types.NamespacedName
	node string
}

// Report is what one Sync saw and did.
type Report struct {
	// Progress is that of every pod the session evicts, by namespace and name.
	Progress []PodProgress
	Summary  Summary
	// Selections split the pods of each node as Select does.
	Selections map[string]Selection
	// Requested counts the requests this Sync wrote.
	Requested int
	// RetryIn is how soon a pod is due to be asked for again, or the
	// deadline passes; zero when nothing is due.
	RetryIn time.Duration
	// Deadline is the session's deadline, if it has one.
	Deadline Deadline
	// Nodes is where the drain of each node stands.
	Nodes map[string]NodeState
}

// Drained is true once every node started and every pod the drain evicts
// is done.
func (r Report) Drained() bool {
	for _, n := range r.Nodes {
		if !n.Started {
			return false
		}
	}
	return r.Summary.Drained()
}

// candidate is a pod a Sync asks for.
type candidate struct {
	pod  *corev1.Pod
	late bool
	// again is true for a pod an earlier pass of the session tracked,
	// whose request is gone or ended: the session asked for it then, or saw
	// its request (a session that took over from another leader's).
	again bool
}

// Sync requests the eviction of every pod of the nodes that needs it and
// reports how far each eviction has come. The error joins the requests that
// failed; they are asked for again RetryAfter later (Report.RetryIn).
func (s *Session) Sync(ctx context.Context) (Report, error) {
	report := Report{Selections: map[string]Selection{}}
	onNodes, due, retryIn := s.observe(ctx, report.Selections)
	written, errs := s.request(ctx, due)
	report.Requested = len(written)
	report.RetryIn = retryIn
	if len(errs) > 0 && (retryIn == 0 || retryIn > s.h.retryAfter()) {
		report.RetryIn = s.h.retryAfter()
	}
	report.Progress = s.progress(ctx, onNodes, written)
	report.Summary = Summarize(report.Progress)
	report.Nodes = s.countLeft(report.Progress)
	deadlineErrs, deadlineIn := s.applyDeadline(ctx, &report, onNodes)
	errs = append(errs, deadlineErrs...)
	if deadlineIn > 0 && (report.RetryIn == 0 || deadlineIn < report.RetryIn) {
		report.RetryIn = deadlineIn
	}
	s.reportBlocked(report.Progress)
	if s.h.OnProgress != nil {
		s.h.OnProgress(report)
	}
	return report, errors.Join(errs...)
}

// observe reads the pods of the nodes, tracks those the drain evicts and
// returns them by UID, those due for a request, and how soon the next one
// that waits is due.
func (s *Session) observe(ctx context.Context, selections map[string]Selection) (map[types.UID]*corev1.Pod, []candidate, time.Duration) {
	now := s.h.now()
	onNodes := map[types.UID]*corev1.Pod{}
	var due []candidate
	var retryIn time.Duration
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, node := range s.startNodes() {
		selection := s.h.SelectOn(node, s.policy)
		selections[node] = selection
		for _, pod := range selection.Evict {
			onNodes[pod.UID] = pod
			_, known := s.tracked[pod.UID]
			if !known {
				s.tracked[pod.UID] = trackedPod{ref: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, node: node}
			}
			if !s.h.status(ctx, pod.Namespace, pod.UID).NeedsRequest() {
				continue
			}
			if last, ok := s.attempts[pod.UID]; ok {
				if wait := last.Add(s.h.retryAfter()).Sub(now); wait > 0 {
					// Asked for a moment ago: the cache may not show it yet.
					if retryIn == 0 || wait < retryIn {
						retryIn = wait
					}
					continue
				}
			}
			s.attempts[pod.UID] = now
			due = append(due, candidate{pod: pod, late: s.synced && !known, again: known})
		}
	}
	s.synced = true
	return onNodes, due, retryIn
}

// request writes the requests of due, Parallelism at a time, and returns
// the requests written by pod UID and the errors of those that failed.
func (s *Session) request(ctx context.Context, due []candidate) (map[types.UID]participant.Status, []error) {
	var mu sync.Mutex
	written := map[types.UID]participant.Status{}
	var errs []error
	workqueue.ParallelizeUntil(ctx, s.h.parallelism(), len(due), func(i int) {
		c := due[i]
		if c.again && !s.h.stillThere(ctx, c.pod) {
			// Its request went with it: the cache has not caught up yet.
			return
		}
		status, err := s.h.Participant.Request(ctx, c.pod, nil)
		if s.h.OnRequested != nil && ctx.Err() == nil {
			s.h.OnRequested(c.pod, c.late, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("requesting the eviction of pod %s/%s: %w", c.pod.Namespace, c.pod.Name, err))
			return
		}
		written[c.pod.UID] = status
	})
	return written, errs
}

// progress is the progress of every tracked pod, from the pods on the
// nodes and the requests just written or in the cache.
func (s *Session) progress(ctx context.Context, onNodes map[types.UID]*corev1.Pod, written map[types.UID]participant.Status) []PodProgress {
	s.mu.Lock()
	defer s.mu.Unlock()
	pdbs := map[string][]*policyv1.PodDisruptionBudget{}
	progress := make([]PodProgress, 0, len(s.tracked))
	for uid, t := range s.tracked {
		status, ok := written[uid]
		if !ok {
			status = s.h.status(ctx, t.ref.Namespace, uid)
		}
		if _, listed := pdbs[t.ref.Namespace]; !listed && s.h.PDBs != nil && status.FailedEvictions > 0 {
			pdbs[t.ref.Namespace], _ = s.h.PDBs.PodDisruptionBudgets(t.ref.Namespace).List(labels.Everything())
		}
		p := Progress(t.ref, uid, onNodes[uid], status, pdbs[t.ref.Namespace])
		p.Node = t.node
		p.WaitSkipped = s.h.skipsWaitFor(onNodes[uid])
		progress = append(progress, p)
	}
	SortProgress(progress)
	return progress
}

// reportBlocked calls OnBlocked for each pod that became blocked, or whose
// blocking budgets changed, since the last Sync.
func (s *Session) reportBlocked(progress []PodProgress) {
	s.mu.Lock()
	var changed []PodProgress
	for _, p := range progress {
		key := ""
		if p.State == StateBlocked {
			key = "blocked:" + strings.Join(p.BlockingPDBs, ",")
		}
		if s.blocked[p.UID] != key {
			s.blocked[p.UID] = key
			if key != "" {
				changed = append(changed, p)
			}
		}
	}
	s.mu.Unlock()
	if s.h.OnBlocked == nil {
		return
	}
	for _, p := range changed {
		s.h.OnBlocked(p)
	}
}

// Tracks is true when the session evicts the pod with uid, there or gone.
func (s *Session) Tracks(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tracked[uid]
	return ok
}

// Tracked counts the pods the session evicts.
func (s *Session) Tracked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tracked)
}

// StartTime is when the session started: the start of its drain.
func (s *Session) StartTime() time.Time {
	return s.created
}

// SetPolicy changes what the session evicts from its next Sync on, as the
// declarative drain's Node annotations say.
func (s *Session) SetPolicy(p Policy) {
	s.policy = p
}
