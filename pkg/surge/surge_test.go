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

package surge

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

// deployment is the one-replica Deployment web, changed by mutate.
func deployment(mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := wrappers.MakeDeployment("web").Obj()
	for _, m := range mutate {
		m(d)
	}
	return d
}

func replicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	return wrappers.MakeReplicaSet(name, replicas).Obj()
}

func maxSurge(v string) func(*appsv1.Deployment) {
	return func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.Parse(v)) }
}

func TestDecide(t *testing.T) {
	current := replicaSet("web-abc", 1)
	hpa := func(kind, apiVersion, name string) *autoscalingv2.HorizontalPodAutoscaler {
		return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-hpa"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: kind, APIVersion: apiVersion, Name: name}}}
	}
	for _, tc := range []struct {
		name         string
		dep          *appsv1.Deployment
		replicaSets  []*appsv1.ReplicaSet
		hpas         []*autoscalingv2.HorizontalPodAutoscaler
		original     int32
		wantSurge    int32
		wantReason   PassReason
		wantMentions string
	}{
		{name: "one replica, 25% rounds up to one", dep: deployment(), original: 1, wantSurge: 1},
		{name: "ten replicas, 25% is three", dep: deployment(), original: 10, wantSurge: 3},
		{name: "an absolute maxSurge", dep: deployment(maxSurge("2")), original: 10, wantSurge: 2},
		{name: "the original replicas count, not the surged ones", dep: deployment(maxSurge("50%"), func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) }), original: 2, wantSurge: 1},
		{name: "defaults to 25% without a rolling update section", dep: deployment(func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate = nil }), original: 4, wantSurge: 1},
		{name: "maxSurge 0", dep: deployment(maxSurge("0")), original: 3, wantReason: PassNoMaxSurge, wantMentions: "maxSurge 0"},
		{name: "maxSurge 0%", dep: deployment(maxSurge("0%")), original: 3, wantReason: PassNoMaxSurge},
		{name: "Recreate", dep: deployment(func(d *appsv1.Deployment) {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		}), original: 1, wantReason: PassRecreate, wantMentions: "Recreate strategy"},
		{name: "paused", dep: deployment(func(d *appsv1.Deployment) { d.Spec.Paused = true }), original: 1, wantReason: PassPaused, wantMentions: "paused"},
		{name: "a rollout in progress", dep: deployment(), replicaSets: []*appsv1.ReplicaSet{current, replicaSet("web-new", 1)}, original: 1,
			wantReason: PassRolloutInProgress, wantMentions: "web-abc and web-new"},
		{name: "old ReplicaSets scaled to zero are no rollout", dep: deployment(), replicaSets: []*appsv1.ReplicaSet{current, replicaSet("web-old", 0)}, original: 1, wantSurge: 1},
		{name: "an autoscaler owns the replicas", dep: deployment(), hpas: []*autoscalingv2.HorizontalPodAutoscaler{hpa("Deployment", "apps/v1", "web")}, original: 1,
			wantReason: PassAutoscaled, wantMentions: "HorizontalPodAutoscaler web-hpa owns its replica count"},
		{name: "an autoscaler of another Deployment", dep: deployment(), hpas: []*autoscalingv2.HorizontalPodAutoscaler{hpa("Deployment", "apps/v1", "api")}, original: 1, wantSurge: 1},
		{name: "an autoscaler of a custom kind of that name", dep: deployment(), hpas: []*autoscalingv2.HorizontalPodAutoscaler{hpa("Deployment", "example.com/v1", "web")}, original: 1, wantSurge: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replicaSets := tc.replicaSets
			if replicaSets == nil {
				replicaSets = []*appsv1.ReplicaSet{current}
			}
			d := Decide(tc.dep, current, replicaSets, tc.hpas, tc.original)
			if d.MaxSurge != tc.wantSurge || d.Reason != tc.wantReason {
				t.Errorf("Decide() = %+v, want maxSurge %d, reason %q", d, tc.wantSurge, tc.wantReason)
			}
			if tc.wantReason != "" && (!strings.HasPrefix(d.Message, "Deployment web: ") || !strings.Contains(d.Message, tc.wantMentions)) {
				t.Errorf("message %q does not name the Deployment and %q", d.Message, tc.wantMentions)
			}
		})
	}
}

func TestStateRoundTripAndReplicas(t *testing.T) {
	dep := deployment(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) })
	if s, err := stateOf(dep); s != nil || err != nil {
		t.Fatalf("stateOf() without a surge = %v, %v", s, err)
	}
	state := &State{OriginalReplicas: 3, Available: 3, Pods: map[types.UID]string{"a": "web-a", "b": "web-b"}}
	surged, err := applyState(dep, state)
	if err != nil {
		t.Fatal(err)
	}
	if *surged.Spec.Replicas != 5 || *dep.Spec.Replicas != 3 {
		t.Errorf("replicas surged %d (original object %d), want 5 (3)", *surged.Spec.Replicas, *dep.Spec.Replicas)
	}
	read, err := currentState(surged)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(state, read); diff != "" {
		t.Errorf("state after a round trip (-want +got):\n%s", diff)
	}

	// Someone scaled the Deployment during the surge: a scale-up is the
	// count to return to; an apply of the manifest's original count does
	// not shrink the surge's goal; a scale-down below it is the new goal.
	for replicas, want := range map[int32]int32{7: 5, 5: 3, 3: 3, 2: 2} {
		surged.Spec.Replicas = ptr.To(replicas)
		if read, _ := currentState(surged); read.OriginalReplicas != want {
			t.Errorf("original replicas after an outside scale to %d = %d, want %d", replicas, read.OriginalReplicas, want)
		}
	}

	// The last pod replaced: the surge is over.
	if need := (&State{OriginalReplicas: 3, Available: 2}).need(); need != 2 {
		t.Errorf("need() of a Deployment with 2 of 3 pods available before the surge = %d, want 2", need)
	}
	done, err := applyState(surged, &State{OriginalReplicas: 3, Pods: map[types.UID]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := done.Annotations[StateAnnotation]; ok || *done.Spec.Replicas != 3 {
		t.Errorf("after the surge: annotations %v, replicas %d", done.Annotations, *done.Spec.Replicas)
	}

	broken := deployment(func(d *appsv1.Deployment) { d.Annotations = map[string]string{StateAnnotation: "{"} })
	if _, err := stateOf(broken); err == nil || !strings.Contains(err.Error(), StateAnnotation) {
		t.Errorf("stateOf() of a broken annotation = %v", err)
	}
}

func TestReplacements(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	pod := func(name string, readyFor time.Duration, mutate ...func(*corev1.Pod)) *corev1.Pod {
		w := wrappers.MakePod(name).UID(name).Node("node-b")
		if readyFor >= 0 {
			w.Ready(now.Add(-readyFor))
		}
		p := w.Obj()
		for _, m := range mutate {
			m(p)
		}
		return p
	}
	pods := []*corev1.Pod{
		pod("evicted", time.Hour),
		pod("old", time.Hour),
		pod("fresh", 3*time.Second),
		pod("pending", -1, func(p *corev1.Pod) {
			p.Spec.NodeName = ""
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/3 nodes are available"}}
		}),
		pod("leaving", time.Hour, func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(now)) }),
	}
	available, waiting, expected := replacements(pods, map[types.UID]string{"evicted": "evicted"}, 10, now)
	if available != 1 {
		t.Errorf("available = %d, want 1 (old; not the evicted, the fresh, the pending or the leaving pod)", available)
	}
	want := []string{
		"pod fresh is Ready, available after minReadySeconds (10s)",
		"pod pending is not Ready: Pending, not scheduled: 0/3 nodes are available",
	}
	if diff := cmp.Diff(want, waiting); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	if expected == nil || !expected.Equal(now.Add(7*time.Second)) {
		t.Errorf("expected = %v, want in 7s", expected)
	}
}
