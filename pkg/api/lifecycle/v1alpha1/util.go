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

// Package v1alpha1 holds the rules about lifecycle.k8s.io/v1alpha1
// EvictionRequests and Evictions (Kubernetes 1.37) that more than one
// component of this project reads: the controller and default evictor, the
// SDK, the drains and the surge interceptor. The same rules of the
// coordination.k8s.io/v1alpha1 revision are in pkg/api/coordination/v1alpha1.
package v1alpha1

import (
	"fmt"
	"slices"
	"strings"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// Evictor is the default responder of a pod target: it evicts the pod
	// through the Eviction API (pods/<name>/eviction).
	Evictor = lifecyclev1alpha1.EvictionResponderImperativeEviction
	// EvictorPriority is the priority of the default evictor: below every
	// responder a pod declares (1000 and more), so it runs last.
	EvictorPriority int32 = 100
	// ManagingControllerPriority is the priority upstream asks of the
	// responder that is a pod's managing controller, leaving room above it
	// for preemption and below it for fallbacks.
	ManagingControllerPriority int32 = 10000
	// HeartbeatDeadline is how long an active responder may go without a
	// heartbeat (or, before its first, since it was made active) before it
	// is Interrupted and the next one takes over.
	HeartbeatDeadline = 20 * time.Minute
	// MinHeartbeatInterval is how often, at most, a responder should
	// heartbeat, so as not to load the control plane.
	MinHeartbeatInterval = 20 * time.Second
)

// Condition returns the condition of type t in conditions, nil when there
// is none.
func Condition(conditions []metav1.Condition, t lifecyclev1alpha1.EvictionConditionType) *metav1.Condition {
	return apimeta.FindStatusCondition(conditions, string(t))
}

// IsTrue is true when conditions have the condition t with status True.
func IsTrue(conditions []metav1.Condition, t lifecyclev1alpha1.EvictionConditionType) bool {
	return apimeta.IsStatusConditionTrue(conditions, string(t))
}

// IsEvicted is true once the target of ev was evicted: TargetEvicted=True.
func IsEvicted(ev *lifecyclev1alpha1.Eviction) bool {
	return IsTrue(ev.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted)
}

// IsFinished is true once no responder works on ev any more: the target
// was evicted, or the eviction failed (canceled, invalid, or no responder
// left).
func IsFinished(ev *lifecyclev1alpha1.Eviction) bool {
	return IsEvicted(ev) || IsTrue(ev.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed)
}

// FailureReason is the reason of ev's True Failed condition, "" when it has
// not failed.
func FailureReason(ev *lifecyclev1alpha1.Eviction) lifecyclev1alpha1.EvictionConditionReason {
	if c := Condition(ev.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
		return lifecyclev1alpha1.EvictionConditionReason(c.Reason)
	}
	return ""
}

// TargetResponder returns the entry of name in ev's targetResponders, nil
// when ev does not list it.
func TargetResponder(ev *lifecyclev1alpha1.Eviction, name string) *lifecyclev1alpha1.TargetResponder {
	return TargetResponderIn(ev.Status.TargetResponders, name)
}

// TargetResponderIn returns the entry of name in responders, nil when
// there is none.
func TargetResponderIn(responders []lifecyclev1alpha1.TargetResponder, name string) *lifecyclev1alpha1.TargetResponder {
	for i := range responders {
		if responders[i].Name == name {
			return &responders[i]
		}
	}
	return nil
}

// ResponderStatus returns the status of name in ev's responders, nil when
// it has none.
func ResponderStatus(ev *lifecyclev1alpha1.Eviction, name string) *lifecyclev1alpha1.ResponderStatus {
	for i := range ev.Status.Responders {
		if ev.Status.Responders[i].Name == name {
			return &ev.Status.Responders[i]
		}
	}
	return nil
}

// ActiveResponder is the name of ev's active responder, "" when none is.
func ActiveResponder(ev *lifecyclev1alpha1.Eviction) string {
	for _, r := range ev.Status.TargetResponders {
		if r.State == lifecyclev1alpha1.ResponderStateActive {
			return r.Name
		}
	}
	return ""
}

// IsHeldBy is true while the responder named name holds ev: it is the
// active responder, has not completed, and ev is not finished. Responders,
// and whoever undoes what a responder left behind, judge by it alike.
func IsHeldBy(ev *lifecyclev1alpha1.Eviction, name string) bool {
	if name == "" || ActiveResponder(ev) != name || IsFinished(ev) {
		return false
	}
	status := ResponderStatus(ev, name)
	return status == nil || status.CompletionTime == nil
}

// ResponderOrder sorts responders into the order they take their turns:
// higher priority first; on a tie, the name whose domain comes first,
// comparing the domain's labels from the top one down, then the key.
func ResponderOrder(responders []lifecyclev1alpha1.TargetResponder) {
	slices.SortStableFunc(responders, func(a, b lifecyclev1alpha1.TargetResponder) int {
		pa, pb := priority(a), priority(b)
		if pa != pb {
			if pa > pb {
				return -1
			}
			return 1
		}
		return CompareNames(a.Name, b.Name)
	})
}

// priority is r's priority; a responder without one goes after every
// responder with one, as kube-apiserver's validation orders them.
func priority(r lifecyclev1alpha1.TargetResponder) int32 {
	if r.Priority == nil {
		return -1
	}
	return *r.Priority
}

// CompareNames orders two domain-prefixed names ("acme.io/foo") as the
// tie-break of equal priorities does: the domains' labels from the top
// domain down, then the keys.
func CompareNames(a, b string) int {
	domainA, keyA, _ := strings.Cut(a, "/")
	domainB, keyB, _ := strings.Cut(b, "/")
	labelsA, labelsB := strings.Split(domainA, "."), strings.Split(domainB, ".")
	slices.Reverse(labelsA)
	slices.Reverse(labelsB)
	if c := slices.Compare(labelsA, labelsB); c != 0 {
		return c
	}
	return strings.Compare(keyA, keyB)
}

// ParticipantRole is the value of the label that names a participant of
// an Eviction: requester, responder, or both.
func ParticipantRole(requester, responder bool) lifecyclev1alpha1.EvictionParticipantRole {
	switch {
	case requester && responder:
		return lifecyclev1alpha1.EvictionParticipantRoleRequesterResponder
	case requester:
		return lifecyclev1alpha1.EvictionParticipantRoleRequester
	}
	return lifecyclev1alpha1.EvictionParticipantRoleResponder
}

// reservedDomains are the domains whose requesters and responders are
// Kubernetes' own.
var reservedDomains = []string{"k8s.io", "kubernetes.io"}

// ValidateParticipantName checks the name of a requester or responder as
// kube-apiserver does: a domain-prefixed key ("acme.io/drain") outside the
// reserved k8s.io and kubernetes.io domains.
func ValidateParticipantName(name string) error {
	domain, _, ok := strings.Cut(name, "/")
	if !ok || domain == "" {
		return fmt.Errorf("%q must be prefixed with a domain, as in acme.io/drain", name)
	}
	if msgs := validation.IsQualifiedName(name); len(msgs) > 0 {
		return fmt.Errorf("%q: %s", name, strings.Join(msgs, "; "))
	}
	for _, reserved := range reservedDomains {
		if domain == reserved || strings.HasSuffix(domain, "."+reserved) {
			return fmt.Errorf("%q: the domain %s is reserved for Kubernetes", name, reserved)
		}
	}
	return nil
}
