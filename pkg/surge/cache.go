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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podAnnotations are the only pod annotations the surge reads: the
// deletion cost it lowers and its own marks.
var podAnnotations = []string{DeletionCostAnnotation, OriginalDeletionCostAnnotation, MarkedByAnnotation, ScaleBacksAnnotation}

// CacheTransform is the cache.TransformFunc of the surge interceptor's
// informers: it keeps of each object what the surge reads, beside the
// readers that read it (a test runs them over these caches). A pod keeps
// its identity, labels (a Deployment's selector), the surge's annotations,
// its controller, whether it is being deleted, its node, phase, and its
// Ready and PodScheduled conditions; a ReplicaSet its identity, controller,
// generation and replica counts. Most of a pod and of a ReplicaSet, their
// containers and template, is what no surge reads, and the surge caches
// every pod of the namespaces it watches. Deployments and
// HorizontalPodAutoscalers, few and whole (the surge writes Deployments
// back, guarded by their resourceVersion), only lose their managedFields,
// which an update without them keeps. Other values, such as tombstones,
// pass unchanged.
func CacheTransform(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return trimPod(o), nil
	case *appsv1.ReplicaSet:
		return trimReplicaSet(o), nil
	}
	if accessor, err := meta.Accessor(obj); err == nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

// trimPod is what the surge reads of pod.
func trimPod(pod *corev1.Pod) *corev1.Pod {
	trimmed := &corev1.Pod{
		TypeMeta:   pod.TypeMeta,
		ObjectMeta: identity(pod.ObjectMeta),
		Spec:       corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status:     corev1.PodStatus{Phase: pod.Status.Phase},
	}
	trimmed.Labels, trimmed.DeletionTimestamp = pod.Labels, pod.DeletionTimestamp
	for _, key := range podAnnotations {
		if value, ok := pod.Annotations[key]; ok {
			if trimmed.Annotations == nil {
				trimmed.Annotations = map[string]string{}
			}
			trimmed.Annotations[key] = value
		}
	}
	for _, c := range pod.Status.Conditions {
		switch c.Type {
		case corev1.PodReady:
			trimmed.Status.Conditions = append(trimmed.Status.Conditions,
				corev1.PodCondition{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime})
		case corev1.PodScheduled:
			trimmed.Status.Conditions = append(trimmed.Status.Conditions,
				corev1.PodCondition{Type: c.Type, Status: c.Status, Message: c.Message})
		}
	}
	return trimmed
}

// trimReplicaSet is what the surge reads of rs.
func trimReplicaSet(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	trimmed := &appsv1.ReplicaSet{TypeMeta: rs.TypeMeta, ObjectMeta: identity(rs.ObjectMeta)}
	trimmed.Generation = rs.Generation
	trimmed.Spec.Replicas = rs.Spec.Replicas
	trimmed.Status.Replicas, trimmed.Status.ObservedGeneration = rs.Status.Replicas, rs.Status.ObservedGeneration
	return trimmed
}

// identity is the name, namespace, UID, resourceVersion, creation time and
// controller reference of m: what names an object in events and logs,
// and whom it belongs to.
func identity(m metav1.ObjectMeta) metav1.ObjectMeta {
	id := metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID,
		ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp}
	for _, ref := range m.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			id.OwnerReferences = []metav1.OwnerReference{ref}
			break
		}
	}
	return id
}
