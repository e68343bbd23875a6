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

package pod

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

func TestWhyNotEvictable(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want NotEvictable
	}{
		{"a bare pod is evictable", wrappers.MakePod("bare").Obj(), ""},
		{"a ReplicaSet pod is evictable", wrappers.MakePod("web").OwnedBy("apps/v1", "ReplicaSet", "web", "rs").Obj(), ""},
		{"a DaemonSet pod is not", wrappers.MakePod("fluentd").DaemonSet().Obj(), DaemonSetPod},
		{"a DaemonSet of another group is not apps' DaemonSet", wrappers.MakePod("other").OwnedBy("example.com/v1", "DaemonSet", "ds", "x").Obj(), ""},
		{"a DaemonSet owner that is not the controller does not count", func() *corev1.Pod {
			p := wrappers.MakePod("ref").DaemonSet().Obj()
			p.OwnerReferences[0].Controller = nil
			return p
		}(), ""},
		{"a mirror pod is not", wrappers.MakePod("etcd").Mirror().Obj(), MirrorPod},
		{"a succeeded pod is not", wrappers.MakePod("job").Phase(corev1.PodSucceeded).Obj(), TerminalPod},
		{"a failed pod is not", wrappers.MakePod("crashed").Phase(corev1.PodFailed).Obj(), TerminalPod},
		{"a pending pod is evictable", wrappers.MakePod("starting").Phase(corev1.PodPending).Obj(), ""},
		{"a terminating pod is evictable: it is done once gone", wrappers.MakePod("leaving").Terminating(time.Now()).Obj(), ""},
		{"a mirror pod of a DaemonSet counts as mirror", wrappers.MakePod("both").DaemonSet().Mirror().Obj(), MirrorPod},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WhyNotEvictable(tc.pod); got != tc.want {
				t.Errorf("WhyNotEvictable() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTerminalTime(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	terminated := func(name string, finished time.Time) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}}}
	}
	running := corev1.ContainerStatus{Name: "b", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	deleted := metav1.NewTime(at.Add(time.Minute))
	always := corev1.ContainerRestartPolicyAlways
	for name, tc := range map[string]struct {
		pod  corev1.Pod
		want time.Time
	}{
		"no terminal time": {},
		"its containers finished": {
			pod:  corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{terminated("a", at), terminated("b", at.Add(time.Second))}}},
			want: at.Add(time.Second),
		},
		"a container still runs": {
			pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{terminated("a", at), running}}},
		},
		"its sidecar finished last": {
			pod: corev1.Pod{
				Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: &always}, {Name: "setup"}}},
				Status: corev1.PodStatus{
					ContainerStatuses:     []corev1.ContainerStatus{terminated("a", at)},
					InitContainerStatuses: []corev1.ContainerStatus{terminated("proxy", at.Add(2*time.Second)), terminated("setup", at.Add(-time.Hour))},
				},
			},
			want: at.Add(2 * time.Second),
		},
		"being deleted": {
			pod:  corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted}},
			want: deleted.Time,
		},
		"deleted after its containers finished": {
			pod:  corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{terminated("a", at)}}},
			want: deleted.Time,
		},
		"its containers finished after its deletion time": {
			pod:  corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{terminated("a", at.Add(time.Hour))}}},
			want: at.Add(time.Hour),
		},
	} {
		if got := TerminalTime(&tc.pod); !got.Equal(tc.want) {
			t.Errorf("%s: TerminalTime() = %v, want %v", name, got, tc.want)
		}
	}
}

// The Eviction API marks what it evicts DisruptionTarget=True with reason
// EvictionByEvictionAPI; other disruptions, or none, are not evictions.
func TestEvictedThroughEvictionAPI(t *testing.T) {
	for name, tc := range map[string]struct {
		conditions []corev1.PodCondition
		want       bool
	}{
		"no condition":       {},
		"evicted":            {conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonEvictionByEvictionAPI}}, want: true},
		"preempted":          {conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"}}},
		"no longer a target": {conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse, Reason: ReasonEvictionByEvictionAPI}}},
		"another condition":  {conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, Reason: ReasonEvictionByEvictionAPI}}},
	} {
		if got := EvictedThroughEvictionAPI(&corev1.Pod{Status: corev1.PodStatus{Conditions: tc.conditions}}); got != tc.want {
			t.Errorf("%s: EvictedThroughEvictionAPI = %v, want %v", name, got, tc.want)
		}
	}
}
