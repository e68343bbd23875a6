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

// Package drain drains nodes through EvictionRequests, for the kubectl
// plugin and the server's declarative node drain alike, as kubectl's drain
// command holds a k8s.io/kubectl/pkg/drain.Helper: which pods of a node get
// a request (Select), how a node is cordoned, how far each pod's eviction
// has come (Progress), and the engine that requests the evictions, asks
// again for those that failed or were canceled, adopts pods that land on a
// node later, and withdraws (Helper, Session). Both drains use this one
// package so that they agree on every pod.
package drain

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/util/podlookup"
)

const (
	// DefaultParallelism bounds the requests one Sync writes at once; the
	// client's QPS limit paces them.
	DefaultParallelism = 16
	// DefaultRetryAfter is how long a pod whose request failed, or whose
	// request the cache does not show yet, waits before it is asked for
	// again.
	DefaultRetryAfter = 5 * time.Second
)

// PodSource is where a drain reads the pods of its nodes: a cache.
type PodSource interface {
	// OnNode lists the pods bound to node.
	OnNode(node string) []*corev1.Pod
}

// Helper is what a drain needs and the hooks it calls: its sessions share
// it. Set its fields before the first Session starts.
type Helper struct {
	// Participant asks for and withdraws the evictions, as one requester,
	// and reads where each stands from its informers (Participant.Inform):
	// a drain reads every pod's status on every Sync.
	Participant participant.Participant
	// Pods reads the pods of the drained nodes.
	Pods PodSource
	// PDBs names the budgets that block an eviction; nil names none.
	PDBs policylisters.PodDisruptionBudgetLister
	// PodSelector limits the drain to the pods it matches; nil is all.
	PodSelector labels.Selector
	// Policy is what the drain evicts beyond kubectl drain's defaults; a
	// session may change its own (Session.SetPolicy).
	Policy Policy
	// SkipWaitForDeleteTimeout, when positive, stops waiting for a pod
	// whose deletion started longer ago (kubectl drain
	// --skip-wait-for-delete-timeout).
	SkipWaitForDeleteTimeout time.Duration
	// Parallelism bounds the requests written at once; DefaultParallelism
	// when zero.
	Parallelism int
	// RetryAfter is how long a pod waits before it is asked for again;
	// DefaultRetryAfter when zero.
	RetryAfter time.Duration
	// Clock is the drain's notion of now; the real clock when nil.
	Clock clock.PassiveClock

	// OnRequested is called after each request: err is nil when it was
	// written; late is true for a pod that landed on the node after the
	// session's first Sync.
	OnRequested func(pod *corev1.Pod, late bool, err error)
	// OnBlocked is called when a pod's eviction is refused, and again when
	// the budgets that refuse it change.
	OnBlocked func(p PodProgress)
	// OnProgress is called at the end of each Sync with its report.
	OnProgress func(r Report)

	// LivePods, when set, is asked whether a pod is still there before a
	// session asks again for the eviction of a pod an earlier pass tracked
	// and whose request is gone: the garbage collector removes the request
	// of a pod that is gone, and a cache that lags behind (kube-apiserver
	// just restarted, say) can still show the pod. Nil trusts the cache.
	LivePods corev1client.PodsGetter
	// CallTimeout bounds each read of LivePods; 0 is 10 seconds.
	CallTimeout time.Duration
	// Escalator evicts or deletes the pods left once a session's deadline
	// passed (Session.SetDeadline); needed only by sessions with one.
	Escalator Escalator
	// OnEscalated is called after a pod's escalation, and again when its
	// outcome (PodProgress.EscalationError) changes.
	OnEscalated func(p PodProgress)
}

// NewSession starts the drain of nodes.
func (h *Helper) NewSession(nodes ...string) *Session {
	return &Session{
		h:                 h,
		created:           h.now(),
		policy:            h.Policy,
		nodes:             nodes,
		tracked:           map[types.UID]trackedPod{},
		attempts:          map[types.UID]time.Time{},
		blocked:           map[types.UID]string{},
		deadlineOnRequest: map[types.UID]string{},
		escalated:         map[types.UID]escalation{},
		started:           map[string]bool{},
		left:              map[string]int{},
	}
}

func (h *Helper) parallelism() int {
	if h.Parallelism > 0 {
		return h.Parallelism
	}
	return DefaultParallelism
}

func (h *Helper) retryAfter() time.Duration {
	if h.RetryAfter > 0 {
		return h.RetryAfter
	}
	return DefaultRetryAfter
}

func (h *Helper) now() time.Time {
	if h.Clock == nil {
		return time.Now()
	}
	return h.Clock.Now()
}

// status reads where the eviction of the pod with uid stands from the
// participant's informers, which answer no error but NotFound (no request).
func (h *Helper) status(ctx context.Context, namespace string, uid types.UID) participant.Status {
	s, _ := h.Participant.Status(ctx, namespace, uid)
	return s
}

// stillThere is false when LivePods says pod is gone, replaced by another
// of its name or terminating; a failed read leaves the cache's word (the
// request is made, and admission judges it).
func (h *Helper) stillThere(ctx context.Context, pod *corev1.Pod) bool {
	if h.LivePods == nil {
		return true
	}
	timeout := h.CallTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	live, err := podlookup.Live(ctx, h.LivePods, pod.Namespace, pod.Name)
	if err != nil {
		// A caller that may not read pods (or a kube-apiserver that does
		// not answer) gets the drain as it was before the read: say so.
		klog.FromContext(ctx).V(2).Info("Could not read the pod from kube-apiserver; the drain goes by its cache", "pod", klog.KObj(pod), "err", err)
		return true
	}
	return live != nil && live.UID == pod.UID && live.DeletionTimestamp == nil
}

// skipsWaitFor is true when the drain no longer waits for pod: it has been
// terminating for longer than SkipWaitForDeleteTimeout.
func (h *Helper) skipsWaitFor(pod *corev1.Pod) bool {
	return h.SkipWaitForDeleteTimeout > 0 && pod != nil && pod.DeletionTimestamp != nil &&
		h.now().Sub(pod.DeletionTimestamp.Time) > h.SkipWaitForDeleteTimeout
}

// selects is true for the pods the drain is limited to.
func (h *Helper) selects(pod *corev1.Pod) bool {
	return h.PodSelector == nil || h.PodSelector.Matches(labels.Set(pod.Labels))
}

// SelectOn reads the pods of node and splits the ones the drain is limited
// to into those that get an EvictionRequest, those it skips and those
// policy refuses.
func (h *Helper) SelectOn(node string, policy Policy) Selection {
	var pods []*corev1.Pod
	for _, pod := range h.Pods.OnNode(node) {
		if h.selects(pod) {
			pods = append(pods, pod)
		}
	}
	return Select(pods, policy)
}
