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
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// The surge's caches keep what it reads of pods and ReplicaSets, and
// nothing else; Deployments lose only their managedFields; tombstones pass.
func TestCacheTransformKeepsWhatTheSurgeReads(t *testing.T) {
	ready := metav1.NewTime(start)
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs", Controller: ptr.To(true)}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "pod", ResourceVersion: "7",
			Labels:          map[string]string{"app": "web"},
			Annotations:     map[string]string{DeletionCostAnnotation: "5", "note": "unread"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n", UID: "n"}, owner},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "web", Image: "web:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready, Reason: "unread"},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Message: "scheduled"},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		}},
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "pod", ResourceVersion: "7",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{DeletionCostAnnotation: "5"},
			OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Message: "scheduled"},
		}},
	}
	if got, _ := CacheTransform(pod); !cmp.Equal(got, any(want)) {
		t.Errorf("cached pod (-want +got):\n%s", cmp.Diff(any(want), got))
	}

	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "rs", Generation: 3, Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "dep", Controller: ptr.To(true)}}},
		Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web"}}}}},
		Status: appsv1.ReplicaSetStatus{Replicas: 2, ObservedGeneration: 3, ReadyReplicas: 2},
	}
	wantRS := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "rs", Generation: 3, OwnerReferences: rs.OwnerReferences},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2)},
		Status:     appsv1.ReplicaSetStatus{Replicas: 2, ObservedGeneration: 3},
	}
	if got, _ := CacheTransform(rs); !cmp.Equal(got, any(wantRS)) {
		t.Errorf("cached ReplicaSet (-want +got):\n%s", cmp.Diff(any(wantRS), got))
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}}
	if got, _ := CacheTransform(dep); got.(*appsv1.Deployment).ManagedFields != nil || *got.(*appsv1.Deployment).Spec.Replicas != 2 {
		t.Errorf("cached Deployment %+v, want it whole but its managedFields", got)
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "shop/web-0", Obj: pod}
	if got, _ := CacheTransform(tombstone); got != any(tombstone) {
		t.Errorf("a tombstone came back as %v", got)
	}
}
