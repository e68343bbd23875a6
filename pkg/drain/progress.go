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
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// State is where the eviction of one pod of a drain stands.
type State string

// The states of a pod in a drain, from the pod and its EvictionRequest.
const (
	// StatePending: the pod has no EvictionRequest yet, or the controller
	// has not acted on it.
	StatePending State = "Pending"
	// StateIntercepted: an interceptor is active and works on the pod.
	StateIntercepted State = "Intercepted"
	// StateEvicting: no interceptor is left; the controller evicts the pod
	// through the Eviction API.
	StateEvicting State = "Evicting"
	// StateBlocked: the Eviction API refused the eviction, most often
	// because of a PodDisruptionBudget; the controller retries with backoff.
	StateBlocked State = "Blocked"
	// StateTerminating: the pod is being deleted.
	StateTerminating State = "Terminating"
	// StateGone: the pod is deleted or terminal; its eviction is done.
	StateGone State = "Gone"
	// StateCanceled: the EvictionRequest completed as canceled while the
	// pod still runs.
	StateCanceled State = "Canceled"
)

// PodProgress is how far the eviction of one pod has come, with what a
// cluster admin needs to see who holds it up.
type PodProgress struct {
	Namespace, Name string
	UID             types.UID
	State           State
	// ActiveInterceptor is the interceptor in charge, if any.
	ActiveInterceptor string
	// LastHeartbeat is the active interceptor's last heartbeat, or the
	// time it was handed the request; nil when neither is known.
	LastHeartbeat *time.Time
	// ExpectedFinish is the active interceptor's estimate, if it gave one.
	ExpectedFinish *time.Time
	// FailedEvictions counts the refused API-initiated evictions.
	FailedEvictions int32
	// BlockingPDBs name the PodDisruptionBudgets of the pod that allow no
	// disruption, when the pod is Blocked.
	BlockingPDBs []string
	// Message is the EvictionRequest's status.message.
	Message string
	// HasRequest is true when the pod has an EvictionRequest, and
	// RequestComplete when it has its Complete condition.
	HasRequest, RequestComplete bool
}

// Progress derives the progress of one pod from the pod (nil once it is
// deleted), its EvictionRequest (nil when there is none) and the
// PodDisruptionBudgets of its namespace.
func Progress(ref types.NamespacedName, uid types.UID, pod *corev1.Pod, er *v1alpha1.EvictionRequest, pdbs []*policyv1.PodDisruptionBudget) PodProgress {
	p := PodProgress{Namespace: ref.Namespace, Name: ref.Name, UID: uid}
	if pod != nil && pod.UID != uid {
		pod = nil
	}
	if er != nil {
		p.HasRequest = true
		p.Message = er.Status.Message
		p.ActiveInterceptor = ptr.Deref(er.Status.ActiveInterceptorName, "")
		p.LastHeartbeat = timeOf(er.Status.HeartbeatTime)
		p.ExpectedFinish = timeOf(er.Status.ExpectedInterceptorFinishTime)
		if er.Status.PodEvictionStatus != nil {
			p.FailedEvictions = er.Status.PodEvictionStatus.FailedAPIEvictionCounter
		}
	}
	var complete *metav1.Condition
	if er != nil {
		complete = apimeta.FindStatusCondition(er.Status.Conditions, string(v1alpha1.EvictionRequestComplete))
		p.RequestComplete = complete != nil && complete.Status == metav1.ConditionTrue
	}
	switch {
	case pod == nil || IsTerminal(pod):
		p.State = StateGone
	case complete != nil && complete.Status == metav1.ConditionTrue:
		if complete.Reason == v1alpha1.CompleteReasonCanceled {
			p.State = StateCanceled
		} else {
			p.State = StateGone
		}
	case pod.DeletionTimestamp != nil:
		p.State = StateTerminating
	case er == nil:
		p.State = StatePending
	case p.ActiveInterceptor != "" && !er.Status.ActiveInterceptorCompleted:
		p.State = StateIntercepted
	case p.FailedEvictions > 0:
		p.State = StateBlocked
		p.BlockingPDBs = BlockingPDBs(pod, pdbs)
	case p.ActiveInterceptor == "" && len(er.Spec.Interceptors) > 0:
		// The controller has not selected the first interceptor yet.
		p.State = StatePending
	default:
		p.State = StateEvicting
	}
	return p
}

// Done is true once the pod is gone.
func (p PodProgress) Done() bool {
	return p.State == StateGone
}

// Settled is true once the pod is gone and its EvictionRequest, if it has
// one that was not deleted with it, is complete: nothing of the drain is
// left for it.
func (p PodProgress) Settled() bool {
	return p.State == StateGone && (!p.HasRequest || p.RequestComplete)
}

// BlockingPDBs names the PodDisruptionBudgets that select pod and allow no
// disruption now, sorted.
func BlockingPDBs(pod *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) []string {
	var names []string
	for _, pdb := range pdbs {
		if pdb.Namespace != pod.Namespace || pdb.Status.DisruptionsAllowed > 0 {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		names = append(names, pdb.Name)
	}
	sort.Strings(names)
	return names
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return ptr.To(t.Time)
}

// Summary counts the pods of a drain by state.
type Summary struct {
	Total, Gone, Intercepted, Evicting, Terminating, Pending, Canceled int
	// Blocked counts the blocked pods by the PodDisruptionBudget that
	// blocks them; "" counts those no budget explains.
	Blocked map[string]int
}

// Summarize counts progress by state.
func Summarize(progress []PodProgress) Summary {
	s := Summary{Total: len(progress), Blocked: map[string]int{}}
	for _, p := range progress {
		switch p.State {
		case StateGone:
			s.Gone++
		case StateIntercepted:
			s.Intercepted++
		case StateEvicting:
			s.Evicting++
		case StateTerminating:
			s.Terminating++
		case StatePending:
			s.Pending++
		case StateCanceled:
			s.Canceled++
		case StateBlocked:
			s.Blocked[strings.Join(p.BlockingPDBs, ",")]++
		}
	}
	return s
}

// Done is true once every pod is gone.
func (s Summary) Done() bool {
	return s.Gone == s.Total
}

// String is the one-line summary of a drain, for example
// "12/40 pods gone, 3 intercepted, 1 blocked by PodDisruptionBudget web".
func (s Summary) String() string {
	summary := fmt.Sprintf("%d/%s gone", s.Gone, Pods(s.Total))
	if rest := s.Breakdown(); rest != "" {
		summary += ", " + rest
	}
	return summary
}

// Breakdown counts the pods that are not gone by state, for example
// "3 intercepted, 1 blocked by PodDisruptionBudget web"; empty when none is left.
func (s Summary) Breakdown() string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Intercepted, "intercepted")
	add(s.Evicting, "evicting")
	add(s.Terminating, "terminating")
	add(s.Pending, "pending")
	add(s.Canceled, "canceled")
	pdbs := make([]string, 0, len(s.Blocked))
	for pdb := range s.Blocked {
		pdbs = append(pdbs, pdb)
	}
	sort.Strings(pdbs)
	for _, pdb := range pdbs {
		if pdb == "" {
			add(s.Blocked[pdb], "blocked by a refused eviction")
		} else {
			add(s.Blocked[pdb], "blocked by PodDisruptionBudget "+pdb)
		}
	}
	return strings.Join(parts, ", ")
}

// Left is the number of pods that are not gone.
func (s Summary) Left() int {
	return s.Total - s.Gone
}

// Pods counts pods in words: "1 pod", "2 pods".
func Pods(n int) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}
