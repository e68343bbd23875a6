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
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/helper"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// heartbeatSkew is how early a heartbeat deadline counts as passed: the
// server's rule for clock skew between writers.
const heartbeatSkew = 10 * time.Second

// checkTurns checks that every pod that ended while it had an
// EvictionRequest ended once no participant held its turn any more: every
// interceptor completed or missed its heartbeat deadline. Two cases are no
// violation: a drain's deadline with the escalation evict or delete had
// passed (written on the request), or the participant holding the turn had
// declared the pod's removal in flight (cancellation policy Forbid), as the
// surge interceptor does before it scales its Deployment back.
//
// The watches of pods and of requests lag behind the servers by different
// amounts, so the turn is judged on the request's history, not on clocks:
// the last state seen before the pod was seen ending, and, when a turn was
// held there, whether a state with every turn over follows before the
// request completes (a release seen late).
func checkTurns(h *indexed, res *Result) {
	for uid, pod := range h.pods {
		end, ok := ended(pod)
		if !ok || terminal(pod) {
			continue
		}
		requests := h.requests[uid]
		if len(requests) == 0 {
			continue
		}
		res.Checked++
		verdict, holder := turnAt(requests, end)
		switch verdict {
		case turnGap:
			res.Inconclusive++
		case turnHeld:
			name := pod[0].obj.Namespace + "/" + pod[0].obj.Name
			res.violate("pod %s ended at %s while %s held its turn", name, stamp(end), holder)
		}
	}
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

// turnAt judges whether a participant held its turn on a request when its
// pod was seen ending at end, and names the holder.
func turnAt(requests []observed[v1alpha1.EvictionRequest], end time.Time) (turnVerdict, string) {
	i := 0
	for j, o := range requests {
		if o.time.After(end) {
			break
		}
		i = j
	}
	held := ""
	var last *v1alpha1.EvictionRequest
	for _, o := range requests[i:] {
		switch {
		case o.typ == history.Gap:
			return turnGap, ""
		case o.typ == history.Deleted || completed(o.obj):
			if held == "" || excused(last, end) {
				return turnOver, ""
			}
			return turnHeld, held
		case turnsOver(o.obj, end):
			return turnOver, ""
		}
		held, last = holder(o.obj), o.obj
	}
	if held == "" || excused(last, end) {
		return turnOver, ""
	}
	return turnHeld, held
}

// turnsOver is true for a request on which no participant's turn is to
// come at t: it declares none, or the lowest one completed or missed its
// heartbeat deadline.
func turnsOver(r *v1alpha1.EvictionRequest, t time.Time) bool {
	if len(r.Spec.Interceptors) == 0 {
		return true
	}
	active := r.Status.ActiveInterceptorName
	if active == nil || *active != r.Spec.Interceptors[0].Name {
		return false
	}
	return r.Status.ActiveInterceptorCompleted || expired(r, t)
}

// holder names who holds the turn of a request whose turns are not over:
// the active interceptor, or the first to come.
func holder(r *v1alpha1.EvictionRequest) string {
	if a := r.Status.ActiveInterceptorName; a != nil && *a != "" {
		return "interceptor " + *a
	}
	return "interceptor " + r.Spec.Interceptors[len(r.Spec.Interceptors)-1].Name + " (not yet selected)"
}

func expired(r *v1alpha1.EvictionRequest, t time.Time) bool {
	deadline := helper.HeartbeatDeadline(r.Status.HeartbeatTime, r.CreationTimestamp, r.Spec.HeartbeatDeadlineSeconds)
	return !t.Before(deadline.Add(-heartbeatSkew))
}

// excused is true when the last state seen of a request allowed its pod to
// end at t while a turn was held: a drain's deadline that evicts or deletes
// had passed, or the holder declared the removal in flight.
func excused(r *v1alpha1.EvictionRequest, t time.Time) bool {
	if r == nil {
		return false
	}
	if p := r.Status.EvictionRequestCancellationPolicy; p != nil && *p == v1alpha1.Forbid {
		return true
	}
	d, ok := drain.RequestDeadline(r.Annotations)
	return ok && !d.Fails() && d.Passed(t)
}

func completed(r *v1alpha1.EvictionRequest) bool {
	for _, c := range r.Status.Conditions {
		if c.Type == string(v1alpha1.EvictionRequestComplete) && c.Status == "True" {
			return true
		}
	}
	return false
}
