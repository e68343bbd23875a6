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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

var heartbeat = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func pdb(name string, allowed int32, matchLabels map[string]string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: wrappers.DefaultNamespace, Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: matchLabels}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

// progressCase is a pod and its request, and the progress they make.
type progressCase struct {
	name string
	pod  *corev1.Pod
	req  participant.Status
	pdbs []*policyv1.PodDisruptionBudget
	want State
	done bool
	pdb  []string
}

// progressCases are the cases of TestProgress.
var progressCases = func() []progressCase {
	running := wrappers.MakePod("db").Label("app", "db").Obj()
	requested := participant.Status{Exists: true, Requested: true}
	with := func(mutate func(*participant.Status)) participant.Status {
		r := requested
		mutate(&r)
		return r
	}
	return []progressCase{
		{name: "a pod gone without a request is done", want: StateGone, done: true},
		{name: "a pod gone before its request completed is not done yet", req: requested, want: StateGone},
		{name: "a pod gone with its request complete is done", req: with(func(r *participant.Status) { r.Complete = true }), want: StateGone, done: true},
		{name: "a pod of the same name and another UID counts as gone", pod: wrappers.MakePod("db").UID("new").Obj(), want: StateGone, done: true},
		{name: "a terminal pod is gone", pod: wrappers.MakePod("db").Phase(corev1.PodFailed).Obj(), req: with(func(r *participant.Status) { r.Complete = true }), want: StateGone, done: true},
		{name: "a request complete while the cache still has the pod", pod: running, req: with(func(r *participant.Status) { r.Complete = true }), want: StateGone, done: true},
		{name: "a canceled request of a running pod", pod: running, req: with(func(r *participant.Status) { r.Complete, r.Canceled = true, true }), want: StateCanceled},
		{name: "a terminating pod", pod: wrappers.MakePod("db").Terminating(heartbeat).Obj(), req: requested, want: StateTerminating},
		{name: "no request yet", pod: running, want: StatePending},
		{name: "interceptors not selected yet", pod: running, req: with(func(r *participant.Status) { r.AwaitingInterceptor = true }), want: StatePending},
		{name: "an active interceptor", pod: running, req: with(func(r *participant.Status) { r.ActiveInterceptor = "a.example.com" }), want: StateIntercepted},
		{name: "no interceptor left: evicting", pod: running, req: with(func(r *participant.Status) { r.ActiveInterceptor, r.InterceptorDone = "a.example.com", true }), want: StateEvicting},
		{name: "no interceptor at all: evicting", pod: running, req: requested, want: StateEvicting},
		{
			name: "refused evictions name the budget that allows no disruption", pod: running, req: with(func(r *participant.Status) { r.FailedEvictions = 3 }),
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", 0, map[string]string{"app": "web"}), pdb("db-strict", 0, map[string]string{"app": "db"}), pdb("db-loose", 1, map[string]string{"app": "db"})},
			want: StateBlocked, pdb: []string{"db-strict"},
		},
		{name: "refused evictions without a budget to blame", pod: running, req: with(func(r *participant.Status) { r.FailedEvictions = 1 }), want: StateBlocked},
		{
			name: "an interceptor that took over after refused evictions is what the pod waits for", pod: running,
			req: with(func(r *participant.Status) { r.ActiveInterceptor, r.FailedEvictions = "a.example.com", 2 }), want: StateIntercepted,
		},
	}
}()

func TestProgress(t *testing.T) {
	for _, tc := range progressCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Progress(types.NamespacedName{Namespace: "shop", Name: "db"}, "uid-db", tc.pod, tc.req, tc.pdbs)
			want := PodProgress{Namespace: "shop", Name: "db", UID: "uid-db", State: tc.want, Request: tc.req, BlockingPDBs: tc.pdb}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Progress() (-want +got):\n%s", diff)
			}
			if got.Done() != tc.done {
				t.Errorf("Done() = %v, want %v", got.Done(), tc.done)
			}
		})
	}
}

func TestNeedsRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status participant.Status
		want   bool
	}{
		{"no request", participant.Status{}, true},
		{"a request listing the drain", participant.Status{Exists: true, Requested: true}, false},
		{"a request of others the drain joins", participant.Status{Exists: true}, true},
		{"a request of others under Forbid goes ahead without the drain", participant.Status{Exists: true, Locked: true}, false},
		{"a request canceled while the pod runs is asked for again", participant.Status{Exists: true, Complete: true, Canceled: true}, true},
		{"a request complete otherwise is done", participant.Status{Exists: true, Complete: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.status.NeedsRequest(); got != tc.want {
				t.Errorf("NeedsRequest() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	gone := PodProgress{State: StateGone}
	progress := []PodProgress{
		gone, gone, {State: StateIntercepted}, {State: StateEvicting},
		{State: StateBlocked, BlockingPDBs: []string{"web"}}, {State: StateBlocked, BlockingPDBs: []string{"web"}}, {State: StateBlocked},
		{State: StatePending}, {State: StateTerminating}, {State: StateCanceled},
		{State: StateGone, Request: participant.Status{Exists: true}},
	}
	s := Summarize(progress)
	want := "2/11 pods gone, 1 intercepted, 1 evicting, 1 terminating, 1 completing, 1 pending, 1 canceled, 1 blocked by a refused eviction, 2 blocked by PodDisruptionBudget web"
	if got := s.String(); got != want {
		t.Errorf("String() =\n%q\nwant\n%q", got, want)
	}
	if s.Drained() || s.Left() != 9 {
		t.Errorf("Drained() = %v, Left() = %d", s.Drained(), s.Left())
	}
	done := Summarize([]PodProgress{gone})
	if !done.Drained() || done.String() != "1/1 pod gone" || done.Breakdown() != "" {
		t.Errorf("one pod gone: Drained() = %v, String() = %q, Breakdown() = %q", done.Drained(), done.String(), done.Breakdown())
	}
}
