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

package v1alpha1

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
)

// TargetKey is the key the EvictionRequests and Evictions of one pod share:
// its namespace and UID. Informers index both kinds by it.
func TargetKey(namespace string, uid types.UID) string {
	return namespace + "/pod/" + string(uid)
}

// EvictionTargetKey is ev's TargetKey, "" when it targets no pod.
func EvictionTargetKey(ev *lifecyclev1alpha1.Eviction) string {
	if ev.Spec.Target.Pod == nil {
		return ""
	}
	return TargetKey(ev.Namespace, ev.Spec.Target.Pod.UID)
}

// RequestTargetKey is er's TargetKey, "" when it targets no pod.
func RequestTargetKey(er *lifecyclev1alpha1.EvictionRequest) string {
	if er.Spec.Target.Pod == nil {
		return ""
	}
	return TargetKey(er.Namespace, er.Spec.Target.Pod.UID)
}

// WantsEviction is true while er asks for its target's eviction: its
// intent is Eviction and it is not being deleted (deleting a request
// withdraws it).
func WantsEviction(er *lifecyclev1alpha1.EvictionRequest) bool {
	return er.DeletionTimestamp == nil && er.Spec.Intent == lifecyclev1alpha1.EvictionRequestIntentEviction
}

// IsRequestFinished is true once er's outcome is final: its target was
// evicted, or the request is invalid. Other failures are not: a new
// Eviction intent on the target starts a new Eviction.
func IsRequestFinished(er *lifecyclev1alpha1.EvictionRequest) bool {
	if IsTrue(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted) {
		return true
	}
	failed := Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed)
	return failed != nil && failed.Status == metav1.ConditionTrue &&
		failed.Reason == string(lifecyclev1alpha1.EvictionConditionReasonEvictionInvalid)
}

// PodResponders are the responders of pod, in the order they take their
// turns, all Inactive: those the pod declares in spec.evictionResponders
// and the default evictor.
func PodResponders(pod *corev1.Pod) []lifecyclev1alpha1.TargetResponder {
	responders := make([]lifecyclev1alpha1.TargetResponder, 0, len(pod.Spec.EvictionResponders)+1)
	for _, r := range pod.Spec.EvictionResponders {
		responders = append(responders, lifecyclev1alpha1.TargetResponder{
			Name: r.Name, Priority: ptr.To(ptr.Deref(r.Priority, 0)), State: lifecyclev1alpha1.ResponderStateInactive,
		})
	}
	responders = append(responders, lifecyclev1alpha1.TargetResponder{
		Name: Evictor, Priority: ptr.To(EvictorPriority), State: lifecyclev1alpha1.ResponderStateInactive,
	})
	ResponderOrder(responders)
	return responders
}

// FailedEvictions is the number of evictions of ev's target the Eviction
// API refused, from the default evictor's message (policyutil.FormatAttempts).
func FailedEvictions(ev *lifecyclev1alpha1.Eviction) int32 {
	if status := ResponderStatus(ev, Evictor); status != nil {
		return policyutil.ParseAttempts(ptr.Deref(status.Message, ""))
	}
	return 0
}

// RelevantEviction is the Eviction of a target that its requests report:
// the one that evicted the pod (the latest), else the oldest active one,
// else the latest that failed. create is true when none is evicted or
// active: a request that wants the eviction needs a new one. The controller
// reports it on the requests, and the drains read it. Timestamps have a
// granularity of one second, so ties are broken the same way by every
// reader (CompareEvictions): two Evictions of one pod created within a
// second never both count as the active one.
func RelevantEviction(evictions []*lifecyclev1alpha1.Eviction) (relevant *lifecyclev1alpha1.Eviction, create bool) {
	var evicted, active, failed *lifecyclev1alpha1.Eviction
	for _, ev := range evictions {
		switch {
		case IsEvicted(ev):
			if evicted == nil || finishedBefore(evicted, ev, lifecyclev1alpha1.EvictionConditionTargetEvicted) {
				evicted = ev
			}
		case IsFinished(ev):
			if failed == nil || finishedBefore(failed, ev, lifecyclev1alpha1.EvictionConditionFailed) {
				failed = ev
			}
		default:
			if active == nil || CompareEvictions(ev, active) < 0 {
				active = ev
			}
		}
	}
	switch {
	case evicted != nil:
		return evicted, false
	case active != nil:
		return active, false
	}
	return failed, true
}

// CompareEvictions orders two active Evictions of one target, the one that
// counts first: the older, then (created within the same second) the one
// whose responders' turns started, then the lower name (CompareEvictionNames).
func CompareEvictions(a, b *lifecyclev1alpha1.Eviction) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	if startedA, startedB := len(a.Status.TargetResponders) > 0, len(b.Status.TargetResponders) > 0; startedA != startedB {
		if startedA {
			return -1
		}
		return 1
	}
	return CompareEvictionNames(a.Name, b.Name)
}

// finishedBefore is true when condition t of a turned True before that of
// b, or at the same time and a's name is lower.
func finishedBefore(a, b *lifecyclev1alpha1.Eviction, t lifecyclev1alpha1.EvictionConditionType) bool {
	ca, cb := Condition(a.Status.Conditions, t), Condition(b.Status.Conditions, t)
	if ca == nil || cb == nil {
		return false
	}
	if c := ca.LastTransitionTime.Compare(cb.LastTransitionTime.Time); c != 0 {
		return c < 0
	}
	return CompareEvictionNames(a.Name, b.Name) < 0
}

// evictionNamePattern matches the names the controller gives Evictions:
// pod-<n>-<pod name>.
var evictionNamePattern = regexp.MustCompile(`^pod-([0-9]+)-(.*)$`)

// EvictionNameCounter reads a name the controller gives the Evictions of a
// pod, pod-<n>-<pod name> (cut to the length limit): n and the pod name.
func EvictionNameCounter(name string) (n int, podName string, ok bool) {
	m := evictionNamePattern.FindStringSubmatch(name)
	if m == nil {
		return 0, "", false
	}
	n, err := strconv.Atoi(m[1])
	return n, m[2], err == nil
}

// CompareEvictionNames orders Eviction names: the controller's names of one
// pod by their counter (pod-9-web before pod-10-web), others as strings.
func CompareEvictionNames(a, b string) int {
	na, podA, okA := EvictionNameCounter(a)
	nb, podB, okB := EvictionNameCounter(b)
	if okA && okB && podA == podB && na != nb {
		return cmp.Compare(na, nb)
	}
	return strings.Compare(a, b)
}
