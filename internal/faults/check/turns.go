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

package check

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// heartbeatSkew is how early a heartbeat deadline counts as passed: the
// server's rule for clock skew between writers.
const heartbeatSkew = 10 * time.Second

// checkTurns checks that every pod that ended while it had an eviction in
// progress (our API's EvictionRequest, lifecycle's Eviction) ended once no
// participant held its turn any more: every one completed or missed its
// heartbeat deadline. Three cases are no violation: a drain's deadline with
// the escalation evict or delete had passed (written on the request), the
// participant holding the turn had declared the pod's removal in flight
// (cancellation policy Forbid), or it had marked the pod as the one it
// removes, as the surge interceptor does before it scales its Deployment
// back. A mark is a pod annotation anyone who may patch the pod can write,
// so it excuses only a pod no eviction was granted for before it was seen
// ending (evicted: the evictions kube-apiserver's audit log shows it
// granted): the surge's removal is its ReplicaSet's deletion, never an
// eviction.
//
// The watches of pods and of requests lag behind the servers by different
// amounts, so the turn is judged on the request's history, not on clocks:
// the last state seen before the pod was seen ending, and, when a turn was
// held there, whether a state with every turn over follows before the
// request completes (a release seen late).
func checkTurns(h *indexed, evicted map[string][]time.Time, res *Result) {
	for uid, pod := range h.pods {
		end, ok, unsure := ended(pod)
		if !ok || terminal(pod) {
			continue
		}
		states := h.turns[uid]
		if len(states) == 0 {
			continue
		}
		res.Checked++
		if unsure {
			res.Inconclusive++
			continue
		}
		mark := ""
		if name := pod[0].obj.Namespace + "/" + pod[0].obj.Name; !evictedBy(evicted, name, end) {
			mark = markedBy(pod)
		}
		verdict, holder := turnAt(states, end, mark)
		switch verdict {
		case turnGap:
			res.Inconclusive++
		case turnHeld:
			name := pod[0].obj.Namespace + "/" + pod[0].obj.Name
			res.violate("pod %s ended at %s while %s held its turn", name, stamp(end), holder)
		}
	}
}

// markedBy is the participant that marked a pod, as it was seen ending, for
// its own removal (the surge interceptor's mark), "" when none did.
func markedBy(pod []observed[corev1.Pod]) string {
	for _, o := range pod {
		if o.typ == history.Deleted || o.obj.DeletionTimestamp != nil {
			return o.obj.Annotations[surge.MarkedByAnnotation]
		}
	}
	return ""
}

// terminal is true for a pod that finished (Succeeded or Failed) before it
// was seen terminating: it ended on its own.
func terminal(pod []observed[corev1.Pod]) bool {
	for _, o := range pod {
		if o.obj.DeletionTimestamp != nil || o.typ == history.Deleted {
			return false
		}
		if o.obj.Status.Phase == corev1.PodSucceeded || o.obj.Status.Phase == corev1.PodFailed {
			return true
		}
	}
	return false
}

type turnVerdict int

const (
	turnOver turnVerdict = iota
	turnHeld
	turnGap
)

// turnAt judges whether a participant held its turn on a pod's eviction
// when the pod was seen ending at end, and names the holder; markedBy is the
// participant that marked the pod for its own removal.
func turnAt(states []turnState, end time.Time, markedBy string) (turnVerdict, string) {
	i := 0
	for j, s := range states {
		if s.time.After(end) {
			break
		}
		i = j
	}
	var last *turnState
	for k := i; k < len(states); k++ {
		s := states[k]
		switch {
		case s.typ == history.Gap:
			return turnGap, ""
		case s.typ == history.Deleted || s.done:
			return heldAt(last, end, markedBy)
		case s.over(end):
			return turnOver, ""
		}
		last = &states[k]
	}
	return heldAt(last, end, markedBy)
}

// heldAt is the verdict of the last state seen with a turn held, nil when
// there is none.
func heldAt(last *turnState, end time.Time, markedBy string) (turnVerdict, string) {
	if last == nil || last.excused(end, markedBy) {
		return turnOver, ""
	}
	return turnHeld, last.holder
}
