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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

const (
	interceptor = "a.example.com"
	silent      = "silent.example.com"
	evictor     = "system:serviceaccount:evictionrequest-system:evictionrequest-apiserver"
)

// story writes a history one entry at a time, each 100 ms after the last.
type story struct {
	now     time.Time
	entries []history.Entry
	audit   []AuditEvent
}

func newStory() *story {
	return &story{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (s *story) tick() time.Time {
	s.now = s.now.Add(100 * time.Millisecond)
	return s.now
}

func (s *story) see(t *testing.T, kind, typ string, obj any) {
	t.Helper()
	entry, err := history.ObjectEntry(kind, typ, obj)
	if err != nil {
		t.Fatal(err)
	}
	entry.Time = s.tick()
	s.entries = append(s.entries, entry)
}

func (s *story) drain(d history.Drain) {
	s.entries = append(s.entries, history.Entry{Time: s.tick(), Drain: &d})
}

func (s *story) grant(pod *corev1.Pod, user string) {
	e := AuditEvent{Stage: "ResponseComplete", Verb: "create", RequestReceivedTimestamp: s.tick()}
	e.User.Username = user
	e.ObjectRef = &struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	}{"pods", "eviction", pod.Namespace, pod.Name}
	e.ResponseStatus = &struct {
		Code int `json:"code"`
	}{201}
	s.audit = append(s.audit, e)
}

// knobs turn a clean history into one that breaks, or tests, one rule.
type knobs struct {
	noRelease, lateRelease, escalated, forbid, noRequest, gap    bool
	secondGrant, budgetBroken, notComplete, silentWaiting        bool
	duplicate, unasked, noDrainEnd, drainFailed, noDrainedStatus bool
	// retried records an attempt of the drain that an outage of
	// kube-apiserver ended, before its end (if any).
	retried                      bool
	zeroReady, writeLoop, podGap bool
	// failedOpen marks the eviction of noRequest as let through by the
	// bridge's webhook failing open.
	failedOpen bool
}

// build is a declarative drain of node-1: the pod web-1 has one
// interceptor, which completes its turn; the controller evicts the pod once
// it did, the request completes, the node says Drained. A one-replica
// Deployment and a PodDisruptionBudget stay healthy throughout.
func build(t *testing.T, k knobs) *story {
	s := newStory()
	start := s.now
	node := wrappers.MakeNode("node-1")
	s.see(t, history.KindNode, history.Added, node.Obj())
	budget := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", Generation: 1},
		Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1, ExpectedPods: 2},
	}
	s.see(t, history.KindPodDisruptionBudget, history.Added, budget)
	deploy := wrappers.MakeDeployment("solo").Replicas(ptr.To[int32](1)).Obj()
	deploy.Namespace, deploy.Status.ReadyReplicas = "shop", 1
	s.see(t, history.KindDeployment, history.Added, deploy)
	pod := wrappers.MakePod("web-1").Namespace("shop").UID("uid-1").Node("node-1").Interceptors(interceptor).Obj()
	s.see(t, history.KindPod, history.Added, pod)
	if k.unasked {
		other := wrappers.MakePod("web-2").Namespace("shop").UID("uid-2").Node("node-1").Obj()
		s.see(t, history.KindPod, history.Added, other)
	}
	kind := history.DrainDeclarative
	if k.noRequest {
		// kubectl drain, through the bridge, which should have made one.
		kind = history.DrainKubectl
	}
	s.drain(history.Drain{ID: "d1", Kind: kind, Nodes: []string{"node-1"}, Phase: history.PhaseStart})

	request := wrappers.MakeEvictionRequest(pod, "nodemaintenance.k8s.io").Interceptors(interceptor).Created(start)
	request.UID = "request-1"
	if !k.noRequest {
		s.see(t, history.KindEvictionRequest, history.Added, request.Obj().DeepCopy())
		held := request.Active(interceptor).Heartbeat(s.now)
		if k.escalated {
			held.Annotation(drain.DeadlineAnnotation, start.Format(time.RFC3339)).Annotation(drain.OnDeadlineAnnotation, "evict")
		}
		if k.forbid {
			held.Policy(v1alpha1.Forbid)
		}
		s.see(t, history.KindEvictionRequest, history.Modified, held.Obj().DeepCopy())
		if k.writeLoop {
			for range defaultMaxWrite {
				s.see(t, history.KindEvictionRequest, history.Modified, held.Heartbeat(s.now).Obj().DeepCopy())
			}
		}
		if k.gap {
			s.see(t, history.KindEvictionRequest, history.Gap, held.Obj().DeepCopy())
		}
		if !k.noRelease && !k.lateRelease {
			s.see(t, history.KindEvictionRequest, history.Modified, request.ActiveCompleted().Obj().DeepCopy())
		}
	}
	s.grant(pod, evictor)
	if k.failedOpen {
		s.audit[len(s.audit)-1].Annotations = map[string]string{failedOpenPrefix + "round_0_index_0": "eviction-bridge.example.com"}
	}
	if k.podGap {
		// The pod's watch lost a stretch: its end is seen only after it.
		s.see(t, history.KindPod, history.Gap, pod)
	}
	if k.secondGrant {
		s.grant(pod, evictor)
	}
	s.see(t, history.KindPod, history.Modified, wrappers.MakePod("web-1").Namespace("shop").UID("uid-1").Node("node-1").
		Interceptors(interceptor).Terminating(s.now).Obj())
	if k.budgetBroken {
		broken := budget.DeepCopy()
		broken.Status.CurrentHealthy, broken.Status.DisruptionsAllowed = 0, 0
		s.see(t, history.KindPodDisruptionBudget, history.Modified, broken)
	}
	if k.zeroReady {
		down := deploy.DeepCopy()
		down.Status.ReadyReplicas = 0
		s.see(t, history.KindDeployment, history.Modified, down)
	}
	if k.lateRelease {
		s.see(t, history.KindEvictionRequest, history.Modified, request.ActiveCompleted().Obj().DeepCopy())
	}
	s.see(t, history.KindPod, history.Deleted, pod)
	if !k.noRequest {
		switch {
		case k.silentWaiting:
			waiting := request.Active(silent).Heartbeat(s.now)
			waiting.Status.ActiveInterceptorCompleted = false
			s.see(t, history.KindEvictionRequest, history.Modified, waiting.Obj().DeepCopy())
		case !k.notComplete:
			s.see(t, history.KindEvictionRequest, history.Modified, request.Complete(v1alpha1.CompleteReasonPodDeleted, "").Obj().DeepCopy())
		}
	}
	if k.duplicate {
		again := request.Obj().DeepCopy()
		again.UID = "request-2"
		s.see(t, history.KindEvictionRequest, history.Added, again)
	}
	if !k.noDrainedStatus {
		s.see(t, history.KindNode, history.Modified, node.Condition(corev1.NodeDrained, corev1.ConditionTrue, "EvictionRequestNodeDrainCompleted", "").Obj())
	}
	if k.retried {
		s.drain(history.Drain{ID: "d1", Kind: kind, Phase: history.PhaseRetry, Outcome: "dial tcp 127.0.0.1:6443: connect: connection refused"})
	}
	switch {
	case k.noDrainEnd:
	case k.drainFailed:
		s.drain(history.Drain{ID: "d1", Kind: kind, Phase: history.PhaseEnd, Outcome: "error: the server is gone"})
	default:
		s.drain(history.Drain{ID: "d1", Kind: kind, Phase: history.PhaseEnd, Outcome: history.OutcomeDrained})
	}
	return s
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		knobs knobs
		// broken is the invariant the history breaks, "" for none, with a
		// word of the violation's line.
		broken, says string
	}{
		{name: "clean"},
		{name: "a release seen after the pod ended", knobs: knobs{lateRelease: true}},
		{name: "a drain's deadline that evicts", knobs: knobs{noRelease: true, escalated: true}},
		{name: "the holder declared the removal", knobs: knobs{noRelease: true, forbid: true}},
		{name: "waiting on a silent participant", knobs: knobs{silentWaiting: true}},
		{name: "a pod ended while its turn was held", knobs: knobs{noRelease: true}, broken: TurnHeld, says: "held its turn"},
		{name: "a watch lost events", knobs: knobs{noRelease: true, gap: true}},
		{name: "a pod with interceptors evicted without a request", knobs: knobs{noRequest: true}, broken: TurnHeld, says: "no EvictionRequest"},
		{name: "a pod with interceptors evicted as the bridge failed open", knobs: knobs{noRequest: true, failedOpen: true}, broken: TurnHeld,
			says: "participants (kube-apiserver's call of eviction-bridge.example.com failed open)"},
		{name: "a budget driven below its minimum", knobs: knobs{budgetBroken: true}, broken: BudgetKept, says: "0 healthy pods of 1"},
		{name: "a pod evicted twice", knobs: knobs{secondGrant: true}, broken: EvictedOnce, says: "2 evictions granted"},
		{name: "a request never complete", knobs: knobs{notComplete: true}, broken: RequestSettled, says: "neither done"},
		{name: "a request made twice", knobs: knobs{duplicate: true}, broken: RequestKept, says: "2 EvictionRequests"},
		{name: "a pod of the drain without a request", knobs: knobs{unasked: true}, broken: RequestKept, says: "web-2"},
		{name: "a drain that never ends", knobs: knobs{noDrainEnd: true}, broken: DrainEnded, says: "never ended"},
		{name: "a drain that fails", knobs: knobs{drainFailed: true}, broken: DrainEnded, says: "the server is gone"},
		{name: "a drain run again after an outage of kube-apiserver, that then drains", knobs: knobs{retried: true}},
		{name: "a drain run again that never ends", knobs: knobs{retried: true, noDrainEnd: true}, broken: DrainEnded, says: "never ended"},
		{name: "a drained node never said so", knobs: knobs{noDrainedStatus: true}, broken: DrainEnded, says: "never seen Drained"},
		{name: "a one-replica Deployment at zero ready", knobs: knobs{zeroReady: true}, broken: ReplicaReady, says: "no ready replica"},
		{name: "a write loop", knobs: knobs{writeLoop: true}, broken: WritesBounded, says: "writes (bound 60)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := build(t, tc.knobs)
			report, err := Check(s.entries, s.audit, Options{SilentParticipants: []string{silent}})
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range report.Results {
				if res.Checked == 0 && tc.name == "clean" {
					t.Errorf("%s: checked nothing", res.Invariant)
				}
			}
			expectBroken(t, report, tc.broken, tc.says, 1)
		})
	}
}

// expectBroken checks that report breaks the invariant broken alone (none
// when it is ""), with n violations, the first saying says.
func expectBroken(t *testing.T, report Report, broken, says string, n int) {
	t.Helper()
	for _, res := range report.Results {
		if res.Invariant != broken {
			if len(res.Violations) != 0 {
				t.Errorf("%s: unexpected violations %q", res.Invariant, res.Violations)
			}
			continue
		}
		if len(res.Violations) != n || !strings.Contains(res.Violations[0], says) {
			t.Errorf("%s: violations %q, want %d, the first saying %q", res.Invariant, res.Violations, n, says)
		}
	}
	if want := broken != ""; (report.Violations() != 0) != want {
		t.Errorf("Violations() = %d, want some: %v", report.Violations(), want)
	}
}

// TestCheckGap checks that a lost stretch of a request's watch makes its
// pod's turn inconclusive rather than a violation.
func TestCheckGap(t *testing.T) {
	s := build(t, knobs{noRelease: true, gap: true})
	report, err := Check(s.entries, s.audit, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := report.Results[0]; got.Inconclusive != 1 || len(got.Violations) != 0 {
		t.Errorf("%s: %d inconclusive, violations %q; want 1 and none", got.Invariant, got.Inconclusive, got.Violations)
	}
}

// TestCheckPodSeenEndingAfterAGap checks that a pod whose end was seen only
// after a lost stretch of its own watch is inconclusive: it may have ended
// any time before, while the turn was still held or after.
func TestCheckPodSeenEndingAfterAGap(t *testing.T) {
	s := build(t, knobs{noRelease: true, podGap: true})
	report, err := Check(s.entries, s.audit, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := report.Results[0]; got.Inconclusive != 1 || len(got.Violations) != 0 {
		t.Errorf("%s: %d inconclusive, violations %q; want 1 and none", got.Invariant, got.Inconclusive, got.Violations)
	}
}

// TestCheckBudgetBeforeItsPods checks that a budget the disruption
// controller reports before it saw its pods (0 healthy of 0, then 0 of 7
// while they start) is no violation: it was never met.
func TestCheckBudgetBeforeItsPods(t *testing.T) {
	s := newStory()
	budget := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", Generation: 1}}
	budget.Status.ObservedGeneration = 1
	s.see(t, history.KindPodDisruptionBudget, history.Added, budget.DeepCopy())
	budget.Status.ExpectedPods, budget.Status.DesiredHealthy = 8, 7
	s.see(t, history.KindPodDisruptionBudget, history.Modified, budget.DeepCopy())
	report, err := Check(s.entries, s.audit, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := report.Results[1]; got.Invariant != BudgetKept || got.Checked != 1 || len(got.Violations) != 0 {
		t.Errorf("%s: checked %d, violations %q; want 1 and none", got.Invariant, got.Checked, got.Violations)
	}
}
