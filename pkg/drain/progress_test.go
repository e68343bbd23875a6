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
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

var (
	heartbeat = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	finish    = heartbeat.Add(5 * time.Minute)
)

func request(mutate ...func(*v1alpha1.EvictionRequest)) *v1alpha1.EvictionRequest {
	er := &v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "uid-db"},
		Spec: v1alpha1.EvictionRequestSpec{
			Target:     v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: "db", UID: "uid-db"}},
			Requesters: []v1alpha1.Requester{{Name: "drain.example.com"}},
		},
	}
	for _, m := range mutate {
		m(er)
	}
	return er
}

func withInterceptors(names ...string) func(*v1alpha1.EvictionRequest) {
	return func(er *v1alpha1.EvictionRequest) {
		for _, n := range names {
			er.Spec.Interceptors = append(er.Spec.Interceptors, v1alpha1.Interceptor{Name: n})
		}
	}
}

func active(name string, completed bool) func(*v1alpha1.EvictionRequest) {
	return func(er *v1alpha1.EvictionRequest) {
		er.Status.ActiveInterceptorName = ptr.To(name)
		er.Status.ActiveInterceptorCompleted = completed
	}
}

func failed(n int32) func(*v1alpha1.EvictionRequest) {
	return func(er *v1alpha1.EvictionRequest) {
		er.Status.PodEvictionStatus = &v1alpha1.PodEvictionStatus{FailedAPIEvictionCounter: n}
	}
}

func completed(reason string) func(*v1alpha1.EvictionRequest) {
	return func(er *v1alpha1.EvictionRequest) {
		er.Status.Conditions = []metav1.Condition{{Type: string(v1alpha1.EvictionRequestComplete), Status: metav1.ConditionTrue, Reason: reason}}
	}
}

func pdb(name string, allowed int32, matchLabels map[string]string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: matchLabels}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

func TestProgress(t *testing.T) {
	running := pod("db", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "db"} })
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		er      *v1alpha1.EvictionRequest
		pdbs    []*policyv1.PodDisruptionBudget
		want    PodProgress
		settled bool
	}{{
		name: "a pod gone without a request is settled", pod: nil, er: nil,
		want: PodProgress{State: StateGone}, settled: true,
	}, {
		name: "a pod gone before its request completed is not settled yet", pod: nil, er: request(),
		want: PodProgress{State: StateGone, HasRequest: true},
	}, {
		name: "a pod gone with its request complete is settled", pod: nil, er: request(completed(v1alpha1.CompleteReasonPodDeleted)),
		want: PodProgress{State: StateGone, HasRequest: true, RequestComplete: true}, settled: true,
	}, {
		name: "a pod of the same name and another UID counts as gone", pod: pod("db", func(p *corev1.Pod) { p.UID = "new" }), er: nil,
		want: PodProgress{State: StateGone}, settled: true,
	}, {
		name: "a terminal pod is gone", pod: pod("db", phase(corev1.PodFailed)), er: request(completed(v1alpha1.CompleteReasonPodTerminated)),
		want: PodProgress{State: StateGone, HasRequest: true, RequestComplete: true}, settled: true,
	}, {
		name: "a request complete as deleted while the cache still has the pod", pod: running, er: request(completed(v1alpha1.CompleteReasonPodDeleted)),
		want: PodProgress{State: StateGone, HasRequest: true, RequestComplete: true}, settled: true,
	}, {
		name: "a canceled request of a running pod", pod: running, er: request(completed(v1alpha1.CompleteReasonCanceled)),
		want: PodProgress{State: StateCanceled, HasRequest: true, RequestComplete: true},
	}, {
		name: "a terminating pod", pod: pod("db", func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()) }), er: request(),
		want: PodProgress{State: StateTerminating, HasRequest: true},
	}, {
		name: "no request yet", pod: running, er: nil,
		want: PodProgress{State: StatePending},
	}, {
		name: "interceptors not selected yet", pod: running, er: request(withInterceptors("a.example.com")),
		want: PodProgress{State: StatePending, HasRequest: true},
	}, {
		name: "an active interceptor with a heartbeat and an estimate", pod: running,
		er: request(withInterceptors("a.example.com"), active("a.example.com", false), func(er *v1alpha1.EvictionRequest) {
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(heartbeat))
			er.Status.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(finish))
			er.Status.Message = "migrating"
		}),
		want: PodProgress{State: StateIntercepted, ActiveInterceptor: "a.example.com", LastHeartbeat: &heartbeat, ExpectedFinish: &finish, Message: "migrating", HasRequest: true},
	}, {
		name: "no interceptor left: evicting", pod: running, er: request(withInterceptors("a.example.com"), active("a.example.com", true)),
		want: PodProgress{State: StateEvicting, ActiveInterceptor: "a.example.com", HasRequest: true},
	}, {
		name: "no interceptor at all: evicting", pod: running, er: request(),
		want: PodProgress{State: StateEvicting, HasRequest: true},
	}, {
		name: "refused evictions name the budget that allows no disruption", pod: running, er: request(failed(3)),
		pdbs: []*policyv1.PodDisruptionBudget{pdb("web", 0, map[string]string{"app": "web"}), pdb("db-strict", 0, map[string]string{"app": "db"}), pdb("db-loose", 1, map[string]string{"app": "db"})},
		want: PodProgress{State: StateBlocked, FailedEvictions: 3, BlockingPDBs: []string{"db-strict"}, HasRequest: true},
	}, {
		name: "refused evictions without a budget to blame", pod: running, er: request(failed(1)),
		want: PodProgress{State: StateBlocked, FailedEvictions: 1, HasRequest: true},
	}, {
		name: "an interceptor that took over after refused evictions is what the pod waits for", pod: running,
		er:   request(withInterceptors("a.example.com"), active("a.example.com", false), failed(2)),
		want: PodProgress{State: StateIntercepted, ActiveInterceptor: "a.example.com", FailedEvictions: 2, HasRequest: true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Progress(types.NamespacedName{Namespace: "shop", Name: "db"}, "uid-db", tc.pod, tc.er, tc.pdbs)
			tc.want.Namespace, tc.want.Name, tc.want.UID = "shop", "db", "uid-db"
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Progress() (-want +got):\n%s", diff)
			}
			if got.Settled() != tc.settled {
				t.Errorf("Settled() = %v, want %v", got.Settled(), tc.settled)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	progress := []PodProgress{
		{State: StateGone}, {State: StateGone}, {State: StateIntercepted}, {State: StateEvicting},
		{State: StateBlocked, BlockingPDBs: []string{"web"}}, {State: StateBlocked, BlockingPDBs: []string{"web"}}, {State: StateBlocked},
		{State: StatePending}, {State: StateTerminating}, {State: StateCanceled},
	}
	s := Summarize(progress)
	want := "2/10 pods gone, 1 intercepted, 1 evicting, 1 terminating, 1 pending, 1 canceled, 1 blocked by a refused eviction, 2 blocked by PodDisruptionBudget web"
	if got := s.String(); got != want {
		t.Errorf("String() =\n%q\nwant\n%q", got, want)
	}
	if s.Done() || s.Left() != 8 {
		t.Errorf("Done() = %v, Left() = %d", s.Done(), s.Left())
	}
	done := Summarize([]PodProgress{{State: StateGone}})
	if !done.Done() || done.String() != "1/1 pod gone" || done.Breakdown() != "" {
		t.Errorf("one pod gone: Done() = %v, String() = %q, Breakdown() = %q", done.Done(), done.String(), done.Breakdown())
	}
}
