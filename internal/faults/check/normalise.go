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
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	coordinationapi "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	lifecycleapi "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// line is one request or Eviction of a pod, on either API, as the checks
// of requests read it: who made it, when it was first seen and first seen
// done, how it was last seen, how often it was written.
type line struct {
	kind string
	uid  types.UID
	// name is the object's namespace/name.
	name string
	// requester is a lifecycle request's spec.requester: on lifecycle.k8s.io
	// each requester makes its own request of a pod. Our API has one request
	// a pod, and "" here.
	requester string
	first     time.Time
	// doneAt is when the object was first seen done (deleted, complete,
	// finished), zero if never.
	doneAt time.Time
	// lastType is the type of its last entry; summary says how it was last
	// seen.
	lastType string
	summary  string
	// writes counts its modifications.
	writes int
}

// normalise builds, from either API's objects, each pod's turn states and
// its request and Eviction lines.
func (h *indexed) normalise() {
	h.turns, h.lines = map[types.UID][]turnState{}, map[types.UID][]line{}
	for uid, timeline := range h.requests {
		for _, o := range timeline {
			h.turns[uid] = append(h.turns[uid], requestTurn(o))
		}
		h.lines[uid] = append(h.lines[uid], linesOf(history.KindEvictionRequest, timeline, coordinationapi.IsComplete,
			func(*v1alpha1.EvictionRequest) string { return "" }, describe)...)
	}
	for uid, timeline := range h.lifecycleRequests {
		h.lines[uid] = append(h.lines[uid], linesOf(history.KindLifecycleEvictionRequest, timeline, lifecycleapi.IsRequestFinished,
			func(r *lifecyclev1alpha1.EvictionRequest) string { return r.Spec.Requester }, describeLifecycleRequest)...)
	}
	for uid, timeline := range h.evictions {
		var pod *corev1.Pod
		if p := h.pods[uid]; len(p) > 0 {
			pod = p[0].obj
		}
		d, ok := h.drainDeadline(uid)
		for _, o := range timeline {
			h.turns[uid] = append(h.turns[uid], evictionTurn(o, pod, d, ok))
		}
		h.lines[uid] = append(h.lines[uid], linesOf(history.KindEviction, timeline, lifecycleapi.IsFinished,
			func(*lifecyclev1alpha1.Eviction) string { return "" }, describeEviction)...)
	}
	for uid := range h.turns {
		sort.SliceStable(h.turns[uid], func(i, j int) bool { return h.turns[uid][i].time.Before(h.turns[uid][j].time) })
	}
}

// drainDeadline is the earliest deadline a drain wrote on the pod's
// lifecycle requests, and whether one did.
func (h *indexed) drainDeadline(uid types.UID) (drain.Deadline, bool) {
	var earliest drain.Deadline
	found := false
	for _, o := range h.lifecycleRequests[uid] {
		if d, ok := drain.RequestDeadline(o.obj.Annotations); ok && (!found || d.At.Before(earliest.At)) {
			earliest, found = d, true
		}
	}
	return earliest, found
}

// linesOf turns the timeline of a pod's requests or Evictions of one kind
// into one line per object.
func linesOf[T any](kind string, timeline []observed[T], done func(*T) bool, requester, summary func(*T) string) []line {
	byUID := map[types.UID]int{}
	var lines []line
	for _, o := range timeline {
		m := any(o.obj).(metav1.Object)
		i, seen := byUID[m.GetUID()]
		if !seen {
			i = len(lines)
			byUID[m.GetUID()] = i
			lines = append(lines, line{kind: kind, uid: m.GetUID(), name: m.GetNamespace() + "/" + m.GetName(), requester: requester(o.obj), first: o.time})
		}
		l := &lines[i]
		l.lastType, l.summary = o.typ, summary(o.obj)
		if o.typ == history.Modified {
			l.writes++
		}
		if l.doneAt.IsZero() && (o.typ == history.Deleted || done(o.obj)) {
			l.doneAt = o.time
		}
	}
	return lines
}

// describeLifecycleRequest says where a lifecycle request stands, for a
// violation's line.
func describeLifecycleRequest(r *lifecyclev1alpha1.EvictionRequest) string {
	if c := lifecycleapi.Condition(r.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
		return "failed: " + c.Reason
	}
	return "requested by " + r.Spec.Requester + ", not finished"
}

// describe says where one of our API's requests stands, for a violation's
// line.
func describe(r *v1alpha1.EvictionRequest) string {
	active := "no active interceptor"
	if a := r.Status.ActiveInterceptorName; a != nil {
		active = "active " + *a
		if r.Status.ActiveInterceptorCompleted {
			active += " (completed)"
		}
	}
	if r.Status.Message != "" {
		return active + "; " + r.Status.Message
	}
	return active
}
