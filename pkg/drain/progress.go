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
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// State is where the eviction of one pod of a drain stands.
type State string

// The states of a pod in a drain, from the pod and its eviction request.
const (
	// StatePending: the pod has no request yet, or no one acted on it yet.
	StatePending State = "Pending"
	// StateIntercepted: an interceptor is active and works on the pod.
	StateIntercepted State = "Intercepted"
	// StateEvicting: no interceptor is left; the pod is evicted through
	// the Eviction API.
	StateEvicting State = "Evicting"
	// StateBlocked: the Eviction API refused the eviction, most often
	// because of a PodDisruptionBudget; it is retried with backoff.
	StateBlocked State = "Blocked"
	// StateTerminating: the pod is being deleted.
	StateTerminating State = "Terminating"
	// StateGone: the pod is deleted or terminal.
	StateGone State = "Gone"
	// StateCanceled: the request completed as canceled while the pod
	// still runs; the drain asks again.
	StateCanceled State = "Canceled"
)

// PodProgress is how far the eviction of one pod has come, with what a
// cluster admin needs to see who holds it up.
type PodProgress struct {
	Namespace, Name string
	UID             types.UID
	// Node is the node the drain found the pod on.
	Node  string
	State State
	// Request is the pod's eviction request as last seen.
	Request participant.Status
	// BlockingPDBs name the PodDisruptionBudgets of the pod that allow no
	// disruption, when the pod is Blocked.
	BlockingPDBs []string
	// WaitSkipped: the pod has been terminating for longer than the
	// drain waits for (kubectl drain --skip-wait-for-delete-timeout).
	WaitSkipped bool
	// Escalation is how the drain escalated the pod after its deadline
	// passed, if it did; EscalationError why the last attempt failed.
	Escalation      Escalation
	EscalationError string
}

// Progress derives the progress of the pod ref with uid from the pod (nil
// once it is deleted), its request, and the PodDisruptionBudgets of its
// namespace.
func Progress(ref types.NamespacedName, uid types.UID, pod *corev1.Pod, request participant.Status, pdbs []*policyv1.PodDisruptionBudget) PodProgress {
	p := PodProgress{Namespace: ref.Namespace, Name: ref.Name, UID: uid, Request: request}
	if pod != nil && pod.UID != uid {
		pod = nil
	}
	switch {
	case pod == nil || podutil.IsTerminal(pod):
		p.State = StateGone
	case request.Complete && request.Canceled:
		p.State = StateCanceled
	case request.Complete:
		p.State = StateGone
	case podutil.IsTerminating(pod):
		p.State = StateTerminating
	case !request.Exists:
		p.State = StatePending
	case request.ActiveInterceptor != "" && !request.InterceptorDone:
		p.State = StateIntercepted
	case request.FailedEvictions > 0:
		p.State = StateBlocked
		p.BlockingPDBs = BlockingPDBs(pod, pdbs)
	case request.AwaitingInterceptor:
		p.State = StatePending
	default:
		p.State = StateEvicting
	}
	return p
}

// Done is true once nothing of the drain is left for the pod: it is gone,
// and its request, unless it was deleted with it, is complete. This is the
// one meaning of "drained", for the kubectl plugin and the node drain alike.
func (p PodProgress) Done() bool {
	return p.WaitSkipped || (p.State == StateGone && (!p.Request.Exists || p.Request.Complete))
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

// SortProgress sorts progress by namespace and name.
func SortProgress(progress []PodProgress) {
	sort.Slice(progress, func(i, j int) bool {
		if progress[i].Namespace != progress[j].Namespace {
			return progress[i].Namespace < progress[j].Namespace
		}
		return progress[i].Name < progress[j].Name
	})
}
