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
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	coordinationapi "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	lifecycleapi "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/helper"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// turnState is one observed state of the object that carries a pod's
// turns, our API's EvictionRequest or lifecycle.k8s.io's Eviction, in the
// terms the checks judge it by. Both APIs' histories become timelines of
// turnStates, so that each invariant is written once.
type turnState struct {
	time time.Time
	typ  string
	// done is true once the object's outcome is final: our request
	// Complete, an Eviction TargetEvicted or Failed.
	done bool
	// holder names the participant whose turn it is, or whose turn comes
	// next, "" once no participant's turn is to come.
	holder string
	// active names the participant working on the pod, "" when none is or
	// it completed; deadline is when it is passed over without a heartbeat.
	active   string
	deadline time.Time
	// last is true when the active participant is the last to come: its
	// deadline passing ends the participants' turns.
	last bool
	// inFlight is true when the participant holding the turn declared the
	// pod's removal its own doing: our API's cancellation policy Forbid.
	inFlight bool
	// drainDeadline is the deadline a drain wrote on the request, with its
	// escalation; ok says whether there is one.
	drainDeadline drain.Deadline
	hasDeadline   bool
	// summary says what the state is, for a violation's line.
	summary string
}

// over is true when no participant's turn is to come at t.
func (s turnState) over(t time.Time) bool {
	return s.holder == "" || (s.last && s.active != "" && !t.Before(s.deadline.Add(-heartbeatSkew)))
}

// expired is true when the active participant was passed over by t.
func (s turnState) expired(t time.Time) bool {
	return s.active != "" && !t.Before(s.deadline.Add(-heartbeatSkew))
}

// excused is true when the state allowed its pod to end at t while a turn
// was held: a drain's deadline that evicts or deletes had passed, the
// holder declared the removal in flight, or the active participant marked
// the pod (markedBy, the surge's mark on the pod as it was seen ending) as
// the one it removes itself by scaling its Deployment back.
func (s turnState) excused(t time.Time, markedBy string) bool {
	return s.inFlight || (s.active != "" && s.active == markedBy) ||
		(s.hasDeadline && !s.drainDeadline.Fails() && s.drainDeadline.Passed(t))
}

// requestTurn is the turnState of one observed version of our API's
// EvictionRequest.
func requestTurn(o observed[v1alpha1.EvictionRequest]) turnState {
	r := o.obj
	s := turnState{time: o.time, typ: o.typ, done: coordinationapi.IsComplete(r), summary: describe(r)}
	s.drainDeadline, s.hasDeadline = drain.RequestDeadline(r.Annotations)
	s.inFlight = r.Status.EvictionRequestCancellationPolicy != nil && *r.Status.EvictionRequestCancellationPolicy == v1alpha1.Forbid
	if len(r.Spec.Interceptors) == 0 {
		return s
	}
	lowest := r.Spec.Interceptors[0].Name
	active := r.Status.ActiveInterceptorName
	switch {
	case active == nil || *active == "":
		s.holder = "interceptor " + r.Spec.Interceptors[len(r.Spec.Interceptors)-1].Name + " (not yet selected)"
		return s
	case *active == lowest && r.Status.ActiveInterceptorCompleted:
		return s
	}
	s.holder = "interceptor " + *active
	s.last = *active == lowest
	if !r.Status.ActiveInterceptorCompleted {
		s.active = *active
	}
	s.deadline = helper.HeartbeatDeadline(r.Status.HeartbeatTime, r.CreationTimestamp, r.Spec.HeartbeatDeadlineSeconds)
	return s
}

// evictionTurn is the turnState of one observed version of a lifecycle
// Eviction of pod (which says which responders it declares), with the
// drain's deadline that the pod's EvictionRequests carry.
func evictionTurn(o observed[lifecyclev1alpha1.Eviction], pod *corev1.Pod, d drain.Deadline, hasDeadline bool) turnState {
	ev := o.obj
	s := turnState{time: o.time, typ: o.typ, done: lifecycleapi.IsFinished(ev), drainDeadline: d, hasDeadline: hasDeadline}
	s.summary = describeEviction(ev)
	order := participantsInOrder(ev, pod)
	for i, r := range order {
		switch r.State {
		case lifecyclev1alpha1.ResponderStateInactive:
			s.holder = "responder " + r.Name + " (not yet selected)"
			return s
		case lifecyclev1alpha1.ResponderStateActive:
			s.holder, s.last = "responder "+r.Name, i == len(order)-1
			status := lifecycleapi.ResponderStatus(ev, r.Name)
			if status != nil && status.CompletionTime != nil {
				if s.last {
					s.holder = ""
				}
				return s
			}
			s.active = r.Name
			since, heartbeat := ev.CreationTimestamp, (*metav1.Time)(nil)
			if status != nil {
				heartbeat = status.HeartbeatTime
				if status.StartTime != nil {
					since = *status.StartTime
				}
			}
			s.deadline = lifecycleapi.ResponderDeadline(heartbeat, since, lifecycleapi.HeartbeatDeadline)
			return s
		}
	}
	return s
}

// participantsInOrder is the responders of ev other than the default
// evictor, in the order they take their turns. Before the controller
// listed them, they are the pod's declared ones, all Inactive.
func participantsInOrder(ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod) []lifecyclev1alpha1.TargetResponder {
	responders := ev.Status.TargetResponders
	if len(responders) == 0 && pod != nil {
		responders = lifecycleapi.PodResponders(pod)
	}
	responders = append([]lifecyclev1alpha1.TargetResponder(nil), responders...)
	lifecycleapi.ResponderOrder(responders)
	var participants []lifecyclev1alpha1.TargetResponder
	for _, r := range responders {
		if r.Name != lifecycleapi.Evictor {
			participants = append(participants, r)
		}
	}
	return participants
}

// describeEviction says where an Eviction stands, for a violation's line.
func describeEviction(ev *lifecyclev1alpha1.Eviction) string {
	active := lifecycleapi.ActiveResponder(ev)
	switch {
	case lifecycleapi.IsEvicted(ev):
		return "target evicted"
	case lifecycleapi.FailureReason(ev) != "":
		return "failed: " + string(lifecycleapi.FailureReason(ev))
	case active == "":
		return "no active responder"
	}
	if status := lifecycleapi.ResponderStatus(ev, active); status != nil && status.CompletionTime != nil {
		return "active " + active + " (completed)"
	}
	return "active " + active
}
