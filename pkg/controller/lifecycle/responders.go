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

package lifecycle

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
)

// turns is what became of the responders' turns in one sync.
type turns struct {
	// responders are the target responders with their new states, in the
	// order they take their turns.
	responders []lifecyclev1alpha1.TargetResponder
	// done is true once the last responder's turn ended: no one is left to
	// evict the pod.
	done bool
	// waiting is true while the pod is gone but the active responder may
	// still report its completion (CompletionGrace).
	waiting bool
	// resync is when to look again though nothing changes: the active
	// responder's deadline, or the end of the grace.
	resync time.Duration
	events []event
}

// event is an event to record once the sync's write succeeded.
type event struct {
	eventType, reason, message string
}

// Reasons of the events the controller records on Evictions and
// EvictionRequests. The routine steps of an eviction (an Eviction created,
// the first turn started, the last turn completed) are in the objects'
// status and get no event: a drain would record several per pod, and
// kube-apiserver stores each.
const (
	// EventResponderHandedOff: the active responder completed and the next
	// one took over.
	EventResponderHandedOff = "ResponderHandedOff"
	// EventResponderTimedOut: the active responder missed its heartbeat
	// deadline and was Interrupted.
	EventResponderTimedOut = "ResponderTimedOut"
	// EventInvalid: the Eviction or request is invalid; nothing evicts the pod.
	EventInvalid = "EvictionInvalid"
	// EventNoFurtherResponder: every responder's turn ended and the pod
	// is still there.
	EventNoFurtherResponder = "NoFurtherResponder"
	// EventCompleted and EventCanceled are shared with the controller of
	// coordination.k8s.io.
	EventCompleted = eviction.EventCompleted
	EventCanceled  = eviction.EventCanceled
)

// targetResponders returns a copy of ev's target responders, or, on the
// first sync, those of its pod, all Inactive; in the order they take their
// turns.
func targetResponders(ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod) []lifecyclev1alpha1.TargetResponder {
	if len(ev.Status.TargetResponders) > 0 {
		responders := slices.Clone(ev.Status.TargetResponders)
		lifecycleutil.ResponderOrder(responders)
		return responders
	}
	if pod == nil || pod.UID != ev.Spec.Target.Pod.UID {
		return nil
	}
	return lifecycleutil.PodResponders(pod)
}

// advance moves the responders' turns on at now: the turn of the active one
// ends when the pod is gone (Completed if it said so, else Interrupted
// once the grace ran out), when every requester withdrew (Canceled), when
// it completed, or when it missed its deadline (Interrupted, and the next
// one's turn starts).
func (c *Controller) advance(now time.Time, ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod, ending eviction.Ending, canceled bool) turns {
	t := turns{responders: targetResponders(ev, pod)}
	rs := t.responders
	if len(rs) == 0 {
		return t
	}
	if ended(rs[len(rs)-1].State) {
		t.done = true
		return t
	}
	active := slices.IndexFunc(rs, func(r lifecyclev1alpha1.TargetResponder) bool {
		return r.State == lifecyclev1alpha1.ResponderStateActive
	})
	switch {
	case ending != "":
		t.podEnded(now, ev, active, c.endedSince(now, ev, pod))
		if !t.waiting {
			c.forgetEnded(ev)
		}
		return t
	case canceled:
		if active >= 0 {
			rs[active].State = lifecyclev1alpha1.ResponderStateCanceled
		}
		return t
	case active < 0:
		first := slices.IndexFunc(rs, func(r lifecyclev1alpha1.TargetResponder) bool {
			return r.State == lifecyclev1alpha1.ResponderStateInactive
		})
		rs[first].State = lifecyclev1alpha1.ResponderStateActive
		t.resync = c.heartbeatDeadline
		return t
	}
	c.judge(now, ev, &t, active)
	return t
}

// podEnded ends the active responder's turn on a pod that ended at since:
// Completed when it reported completion; otherwise, once CompletionGrace
// has passed since, Interrupted.
func (t *turns) podEnded(now time.Time, ev *lifecyclev1alpha1.Eviction, active int, since time.Time) {
	if active < 0 {
		return
	}
	if status := lifecycleutil.ResponderStatus(ev, t.responders[active].Name); status != nil && status.CompletionTime != nil {
		t.responders[active].State = lifecyclev1alpha1.ResponderStateCompleted
		return
	}
	if left := CompletionGrace - now.Sub(since); left > 0 {
		t.waiting, t.resync = true, left
		return
	}
	t.responders[active].State = lifecyclev1alpha1.ResponderStateInterrupted
}

// endedSince is when ev's pod, which ended, stopped: the pod's terminal
// time while it is still there and its status says (podutil.TerminalTime),
// else the first time the controller saw it ended.
func (c *Controller) endedSince(now time.Time, ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod) time.Time {
	if pod != nil && pod.UID == ev.Spec.Target.Pod.UID {
		if at := podutil.TerminalTime(pod); !at.IsZero() {
			return at
		}
	}
	key := ev.Namespace + "/" + ev.Name
	c.endedMu.Lock()
	defer c.endedMu.Unlock()
	if since, ok := c.endedAt[key]; ok {
		return since
	}
	c.endedAt[key] = now
	return now
}

// forgetEnded drops what endedSince remembered of ev.
func (c *Controller) forgetEnded(ev *lifecyclev1alpha1.Eviction) {
	c.endedMu.Lock()
	defer c.endedMu.Unlock()
	delete(c.endedAt, ev.Namespace+"/"+ev.Name)
}

// judge ends the turn of the active responder when it completed or missed
// its deadline and starts the next one's; otherwise it looks again at the
// deadline.
func (c *Controller) judge(now time.Time, ev *lifecyclev1alpha1.Eviction, t *turns, active int) {
	rs := t.responders
	name := rs[active].Name
	status := lifecycleutil.ResponderStatus(ev, name)
	if status == nil {
		status = &lifecyclev1alpha1.ResponderStatus{Name: name}
	}
	since := metav1.NewTime(now)
	if status.StartTime != nil {
		since = *status.StartTime
	}
	deadline := lifecycleutil.ResponderDeadline(status.HeartbeatTime, since, c.heartbeatDeadline)
	end := eviction.Judge(status.CompletionTime != nil, deadline, now)
	reason := EventResponderHandedOff
	switch end {
	case eviction.Waiting:
		t.resync = eviction.UntilOrNow(deadline, now)
		return
	case eviction.Completed:
		rs[active].State = lifecyclev1alpha1.ResponderStateCompleted
	case eviction.TimedOut:
		rs[active].State = lifecyclev1alpha1.ResponderStateInterrupted
		reason = EventResponderTimedOut
	}
	why := end.Why(c.heartbeatDeadline, deadline)
	next, ok := eviction.Next(responderNames(rs), name)
	if !ok {
		t.done = true
		if end == eviction.TimedOut {
			// A last turn that completed needs no event of its own: the
			// Eviction's outcome, recorded with it, follows from it.
			t.events = append(t.events, event{end.EventType(), reason, eviction.LastTurnMessage(responderRole, name, why)})
		}
		return
	}
	rs[slices.IndexFunc(rs, func(r lifecyclev1alpha1.TargetResponder) bool { return r.Name == next })].State = lifecyclev1alpha1.ResponderStateActive
	t.resync = c.heartbeatDeadline
	t.events = append(t.events, event{end.EventType(), reason, eviction.HandOffMessage(responderRole, next, name, why)})
}

// responderRole names a responder in the messages of its turns.
const responderRole = "Responder"

// ended is true for the states a responder's turn ends in.
func ended(state lifecyclev1alpha1.ResponderStateType) bool {
	switch state {
	case lifecyclev1alpha1.ResponderStateCompleted, lifecyclev1alpha1.ResponderStateInterrupted, lifecyclev1alpha1.ResponderStateCanceled:
		return true
	}
	return false
}

func responderNames(rs []lifecyclev1alpha1.TargetResponder) []string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	return names
}
