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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
)

// decision is what one sync of an Eviction decided: the status fields the
// controller owns, when to look again though nothing changes, and the
// events to record once the status is written.
type decision struct {
	status lifecyclev1alpha1.EvictionStatus
	resync time.Duration
	events []event
}

// decide computes the status of ev at now from its pod (the pod of the
// target's name, nil when there is none), the EvictionRequests of its
// target, and whether another Eviction of the target is active.
func (c *Controller) decide(now time.Time, ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod, requests []*lifecyclev1alpha1.EvictionRequest, duplicate bool) decision {
	d := decision{status: lifecyclev1alpha1.EvictionStatus{ObservedGeneration: ptr.To(ev.Generation)}}
	if message := invalidEviction(ev, pod, duplicate); message != "" {
		// An Eviction that already started keeps its responders' states:
		// it fails as a whole.
		d.status = ownedStatus(ev.Status)
		d.status.ObservedGeneration = ptr.To(ev.Generation)
		d.status.Conditions = failed(lifecyclev1alpha1.EvictionConditionReasonEvictionInvalid, message).conditions(now, ev.Status.Conditions)
		d.events = []event{{corev1.EventTypeWarning, EventInvalid, message}}
		return d
	}
	if message := untrustedResponders(ev, pod); message != "" {
		// Its responders' turns cannot be trusted: it fails, and a new
		// Eviction starts while a request wants one.
		d.status = ownedStatus(ev.Status)
		d.status.ObservedGeneration = ptr.To(ev.Generation)
		interruptActive(d.status.TargetResponders)
		d.status.Conditions = failed(lifecyclev1alpha1.EvictionConditionReasonEvictionInvalid, message).conditions(now, ev.Status.Conditions)
		d.events = []event{{corev1.EventTypeWarning, EventInvalid, message}}
		return d
	}
	d.status.Requesters = requesters(ev, requests)
	ref := ev.Spec.Target.Pod
	ending, endMessage := eviction.Ended(pod, ref.Name, ref.UID)
	canceled := ending == "" && !wantsEviction(requests)
	t := c.advance(now, ev, pod, ending, canceled)
	d.status.TargetResponders = t.responders
	d.status.Responders = responderEntries(now, ev, t.responders)
	d.resync, d.events = t.resync, t.events

	var o outcome
	switch {
	case ending != "" && !t.waiting:
		o = evicted(lifecyclev1alpha1.EvictionConditionReason(ending), endedMessage(ending))
		d.events = append(d.events, event{corev1.EventTypeNormal, EventCompleted, endMessage})
	case canceled:
		o = failed(lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters, MessageCanceled)
		d.events = append(d.events, event{corev1.EventTypeNormal, EventCanceled, o.message})
	case t.done:
		o = failed(lifecyclev1alpha1.EvictionConditionReasonNoFurtherResponder, MessageNoFurtherResponder)
		d.events = append(d.events, event{corev1.EventTypeWarning, EventNoFurtherResponder, o.message})
	default:
		o = awaiting(awaitingMessage(t.responders))
	}
	d.status.Conditions = o.conditions(now, ev.Status.Conditions)
	return d
}

// invalidEviction says why ev cannot proceed, in upstream's words: it
// targets no pod, another Eviction of its pod is active (the one that counts,
// lifecycleutil.RelevantEviction), or its pod belongs to a scheduling group,
// whose eviction the API does not support yet. It is asked on every sync, as
// upstream does: two Evictions of one pod that both started (created within
// a second) leave one active.
func invalidEviction(ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod, duplicate bool) string {
	ref := ev.Spec.Target.Pod
	switch {
	case ref == nil:
		return MessageUnsupportedTarget
	case duplicate:
		return MessageDuplicateEviction
	case pod != nil && pod.UID == ref.UID && pod.Spec.SchedulingGroup != nil:
		return MessageSchedulingGroup
	}
	return ""
}

// awaitingMessage says whose turn it is.
func awaitingMessage(rs []lifecyclev1alpha1.TargetResponder) string {
	for _, r := range rs {
		if r.State == lifecyclev1alpha1.ResponderStateActive {
			return fmt.Sprintf("Waiting for responder %s.", r.Name)
		}
	}
	return "Waiting for the pod's responders."
}

// responderEntries are the status.responders entries the controller owns:
// one per target responder, with the start time of those whose turn
// started. The rest of an entry is its responder's.
func responderEntries(now time.Time, ev *lifecyclev1alpha1.Eviction, rs []lifecyclev1alpha1.TargetResponder) []lifecyclev1alpha1.ResponderStatus {
	entries := make([]lifecyclev1alpha1.ResponderStatus, 0, len(rs))
	for _, r := range rs {
		entry := lifecyclev1alpha1.ResponderStatus{Name: r.Name}
		if existing := lifecycleutil.ResponderStatus(ev, r.Name); existing != nil && existing.StartTime != nil {
			entry.StartTime = existing.StartTime
		} else if r.State == lifecyclev1alpha1.ResponderStateActive {
			entry.StartTime = ptr.To(metav1.NewTime(now))
		}
		entries = append(entries, entry)
	}
	return entries
}

// wantsEviction is true while some request of the target asks for its
// eviction.
func wantsEviction(requests []*lifecyclev1alpha1.EvictionRequest) bool {
	for _, er := range requests {
		if lifecycleutil.WantsEviction(er) {
			return true
		}
	}
	return false
}
