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
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// checkBudgets checks that no PodDisruptionBudget, once its pods were
// healthy, was seen with fewer healthy pods than it requires or a negative
// disruptionsAllowed.
func checkBudgets(h *indexed, res *Result) {
	for key, timeline := range h.budgets {
		res.Checked++
		met := false
		for _, o := range timeline {
			s := o.obj.Status
			if o.typ == history.Deleted || o.obj.Generation != s.ObservedGeneration {
				continue
			}
			if s.DisruptionsAllowed < 0 {
				res.violate("PodDisruptionBudget %s: disruptionsAllowed %d at %s", key, s.DisruptionsAllowed, stamp(o.time))
				break
			}
			// A budget counts as met once it saw its pods: before that the
			// disruption controller reports 0 of 0.
			if s.ExpectedPods > 0 && s.CurrentHealthy >= s.DesiredHealthy {
				met = true
			} else if met {
				res.violate("PodDisruptionBudget %s: %d healthy pods of %d desired at %s", key, s.CurrentHealthy, s.DesiredHealthy, stamp(o.time))
				break
			}
		}
	}
}

// checkReplicas checks that no Deployment of one replica, once it had a
// ready one, was seen with none.
func checkReplicas(h *indexed, res *Result) {
	for key, timeline := range h.deployments {
		if r := timeline[0].obj.Spec.Replicas; r == nil || *r != 1 {
			continue
		}
		res.Checked++
		ready := false
		for _, o := range timeline {
			if o.typ == history.Deleted {
				break
			}
			if o.obj.Status.ReadyReplicas > 0 {
				ready = true
			} else if ready && !rollingOut(o.obj) {
				res.violate("Deployment %s: no ready replica at %s", key, stamp(o.time))
				break
			}
		}
	}
}

// rollingOut is true while the Deployment controller has not yet observed
// the Deployment's latest spec: its status is stale.
func rollingOut(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration < d.Generation
}

// checkSettled checks that every request and Eviction, at the end of the
// record, is done (deleted, complete, finished) or belongs to a pod whose
// eviction waits on the turn of a participant that never answers.
func checkSettled(h *indexed, opts Options, res *Result) {
	silent := map[string]bool{}
	for _, name := range opts.SilentParticipants {
		silent[name] = true
	}
	for uid, lines := range h.lines {
		waiting := false
		if states := h.turns[uid]; len(states) > 0 {
			last := states[len(states)-1]
			waiting = !last.done && last.typ != history.Deleted && silent[last.active] && !last.expired(h.end)
		}
		for _, l := range lines {
			res.Checked++
			switch {
			case !l.doneAt.IsZero() || waiting:
			case l.lastType == history.Gap:
				res.Inconclusive++
			default:
				res.violate("%s %s neither done nor waiting on a silent participant: %s", l.kind, l.name, l.summary)
			}
		}
	}
}

// checkRequestsKept checks that every pod a declarative or plugin drain
// asked for got its EvictionRequest, and that none was duplicated: every
// pod running on a node of such a drain when it started (DaemonSet and
// mirror pods aside, which no drain evicts) must have one. Our API names a
// request by its pod's UID, so two are a request deleted and made again; on
// lifecycle.k8s.io two of one requester are, and so is an Eviction made
// while another of the pod was not finished.
func checkRequestsKept(h *indexed, res *Result) {
	asked := map[types.UID]string{}
	for _, d := range h.drains {
		if d.start.Kind == history.DrainKubectl {
			continue
		}
		nodes := map[string]bool{}
		for _, n := range d.start.Nodes {
			nodes[n] = true
		}
		for uid, timeline := range h.pods {
			if pod := stateAt(timeline, d.started); pod != nil && nodes[pod.Spec.NodeName] && drainable(pod) {
				asked[uid] = d.start.ID
			}
		}
	}
	for uid, drainID := range asked {
		res.Checked++
		pod := h.pods[uid][0].obj
		if !hasRequest(h.lines[uid]) {
			res.violate("pod %s/%s on a node of drain %s has no EvictionRequest", pod.Namespace, pod.Name, drainID)
		}
	}
	for uid, lines := range h.lines {
		requests := map[string]int{}
		var evictions []line
		for _, l := range lines {
			if l.kind == history.KindEviction {
				evictions = append(evictions, l)
			} else {
				requests[l.requester]++
			}
		}
		for requester, n := range requests {
			if n > 1 {
				res.violate("pod %s: %d EvictionRequests%s", uid, n, byRequester(requester))
			}
		}
		sort.Slice(evictions, func(i, j int) bool { return evictions[i].first.Before(evictions[j].first) })
		for i := 1; i < len(evictions); i++ {
			if prev := evictions[i-1]; prev.doneAt.IsZero() || evictions[i].first.Before(prev.doneAt) {
				res.violate("pod %s: Eviction %s made while %s was not finished", uid, evictions[i].name, prev.name)
			}
		}
	}
}

// hasRequest is true when a pod's lines hold a request of either API.
func hasRequest(lines []line) bool {
	for _, l := range lines {
		if l.kind != history.KindEviction {
			return true
		}
	}
	return false
}

func byRequester(requester string) string {
	if requester == "" {
		return ""
	}
	return " of " + requester
}

// stateAt is the pod as last seen at or before t, nil when it was not
// running then (not yet seen, terminating or gone).
func stateAt(timeline []observed[corev1.Pod], t time.Time) *corev1.Pod {
	var pod *corev1.Pod
	for _, o := range timeline {
		if o.time.After(t) {
			break
		}
		pod = o.obj
		if o.typ == history.Deleted || o.typ == history.Gap {
			pod = nil
		}
	}
	if pod == nil || pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	return pod
}

// drainable is false for the pods no drain evicts: DaemonSet pods and
// mirror pods.
func drainable(pod *corev1.Pod) bool {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "DaemonSet" {
			return false
		}
	}
	return true
}

// declaresParticipants is true for a pod that lists interceptors (our
// API) or eviction responders (lifecycle.k8s.io).
func declaresParticipants(timeline []observed[corev1.Pod]) bool {
	if len(timeline) == 0 {
		return false
	}
	pod := timeline[0].obj
	return strings.TrimSpace(pod.Annotations[v1alpha1.PodInterceptorsAnnotation]) != "" || len(pod.Spec.EvictionResponders) > 0
}

// checkDrains checks that every drain ended, drained or by its deadline's
// outcome, and that a declarative drain said it drained every node it
// drained (the Node's Drained condition True).
func checkDrains(h *indexed, res *Result) {
	for _, d := range h.drains {
		res.Checked++
		switch {
		case d.end == nil:
			res.violate("%s drain %s of %s started at %s never ended", d.start.Kind, d.start.ID, strings.Join(d.start.Nodes, ","), stamp(d.started))
		case d.end.Outcome != history.OutcomeDrained && !strings.HasPrefix(d.end.Outcome, "deadline"):
			res.violate("%s drain %s of %s ended at %s: %s", d.start.Kind, d.start.ID, strings.Join(d.start.Nodes, ","), stamp(d.ended), d.end.Outcome)
		case d.start.Kind == history.DrainDeclarative && d.end.Outcome == history.OutcomeDrained:
			for _, n := range d.start.Nodes {
				if !drainedSeen(h.nodes[n], d.started) {
					res.violate("declarative drain %s: node %s never seen Drained after %s", d.start.ID, n, stamp(d.started))
				}
			}
		}
	}
}

func drainedSeen(timeline []observed[corev1.Node], since time.Time) bool {
	for _, o := range timeline {
		if o.time.Before(since) {
			continue
		}
		for _, c := range o.obj.Status.Conditions {
			if c.Type == corev1.NodeDrained && c.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// checkWrites checks that no request or Eviction saw more writes than the
// bound: a write loop between two writers shows as an object written
// without end.
func checkWrites(h *indexed, opts Options, res *Result) {
	for _, lines := range h.lines {
		for _, l := range lines {
			res.Checked++
			if l.writes > opts.MaxWritesPerRequest {
				res.violate("%s %s: %d writes (bound %d)", l.kind, l.name, l.writes, opts.MaxWritesPerRequest)
			}
		}
	}
}
