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

package cachetransform

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// PodAnnotations are the only pod annotations TrimPod keeps: the interceptors
// a pod declares, which admission copies into spec.interceptors and the
// controller counts, the mirror-pod marker, for which no eviction is
// attempted, and the descheduler's background-eviction marks, which the
// eviction API bridge reads and sets.
var PodAnnotations = []string{v1alpha1.PodInterceptorsAnnotation, corev1.MirrorPodAnnotationKey,
	podutil.RequestEvictOnlyAnnotation, podutil.EvictionInProgressAnnotation}

// TrimPod is a cache.TransformFunc that keeps of a pod only what the
// server's readers of the pod cache use: its identity and labels (admission
// merges them into the request, a drain matches PodDisruptionBudgets with
// them), the PodAnnotations, its controller reference (DaemonSet pods are
// not evicted), whether it is being deleted, its node, and its phase with
// the reason and message a node shutdown leaves. The rest of a pod, most of
// all its containers and their statuses, is most of its size, so the cache
// of every pod of a cluster shrinks to a fraction.
//
// The trimmed pods are read-only views: nothing may write one back. Code that
// needs the whole pod GETs it. Values that are not pods, such as the
// tombstones of deleted pods, pass unchanged.
func TrimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              pod.Name,
			Namespace:         pod.Namespace,
			UID:               pod.UID,
			ResourceVersion:   pod.ResourceVersion,
			CreationTimestamp: pod.CreationTimestamp,
			DeletionTimestamp: pod.DeletionTimestamp,
			Labels:            pod.Labels,
		},
		Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: corev1.PodStatus{
			Phase:   pod.Status.Phase,
			Reason:  pod.Status.Reason,
			Message: pod.Status.Message,
		},
	}
	trimmed.Annotations = keptAnnotations(pod.Annotations)
	if owner := metav1.GetControllerOfNoCopy(pod); owner != nil {
		trimmed.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return trimmed, nil
}

// keptAnnotations are the PodAnnotations of annotations: the map itself
// when it holds no others, as most pods' do, else a copy of them.
func keptAnnotations(annotations map[string]string) map[string]string {
	kept := 0
	for _, key := range PodAnnotations {
		if _, ok := annotations[key]; ok {
			kept++
		}
	}
	switch {
	case kept == 0:
		return nil
	case kept == len(annotations):
		return annotations
	}
	trimmed := make(map[string]string, kept)
	for _, key := range PodAnnotations {
		if value, ok := annotations[key]; ok {
			trimmed[key] = value
		}
	}
	return trimmed
}

// TrimPods makes the pod informer of factory cache pods through TrimPod. It
// must be called before the informer starts.
func TrimPods(factory informers.SharedInformerFactory) error {
	return factory.Core().V1().Pods().Informer().SetTransform(TrimPod)
}
