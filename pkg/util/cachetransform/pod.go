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
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
)

// TrimPodKeeping is a cache.TransformFunc that keeps of a pod only what the
// readers of the pod caches of both binaries use: its identity and labels
// (admission merges them into the request, a drain matches
// PodDisruptionBudgets with them), the annotations named (those the
// binary's readers declare they read, each in its PodAnnotationsRead), its
// controller
// reference (DaemonSet pods are not evicted, unmanaged ones are refused),
// whether it is being deleted, its node, its emptyDir volumes (a drain
// refuses pods with local data unless told to delete it; only that they
// are emptyDir is kept), its eviction responders and scheduling group
// (lifecycle.k8s.io), its phase with the reason and message a node
// shutdown leaves, and its DisruptionTarget condition (whether the
// Eviction API evicted it); of a pod that ended, also when each container (and
// sidecar) finished (podutil.TerminalTime). The rest of a pod, most of all
// its containers, their statuses and its other volumes, is most of its
// size, so the cache of every pod of a cluster shrinks to a fraction.
//
// The trimmed pods are read-only views: nothing may write one back. Code that
// needs the whole pod GETs it. Values that are not pods, such as the
// tombstones of deleted pods, pass unchanged.
func TrimPodKeeping(annotations ...string) func(obj any) (any, error) {
	annotations = distinct(annotations)
	return func(obj any) (any, error) {
		return trimPod(obj, annotations)
	}
}

func trimPod(obj any, annotations []string) (any, error) {
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
		Spec: corev1.PodSpec{
			NodeName:           pod.Spec.NodeName,
			Volumes:            emptyDirs(pod.Spec.Volumes),
			EvictionResponders: pod.Spec.EvictionResponders,
			SchedulingGroup:    pod.Spec.SchedulingGroup,
		},
		Status: corev1.PodStatus{
			Phase:      pod.Status.Phase,
			Reason:     pod.Status.Reason,
			Message:    pod.Status.Message,
			Conditions: disruptionTarget(pod.Status.Conditions),
		},
	}
	trimmed.Annotations = keptAnnotations(pod.Annotations, annotations)
	if owner := metav1.GetControllerOfNoCopy(pod); owner != nil {
		trimmed.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	if podutil.IsTerminal(pod) {
		trimmed.Spec.InitContainers = sidecars(pod.Spec.InitContainers)
		trimmed.Status.ContainerStatuses = finishTimes(pod.Status.ContainerStatuses)
		trimmed.Status.InitContainerStatuses = finishTimes(pod.Status.InitContainerStatuses)
	}
	return trimmed, nil
}

// disruptionTarget is the DisruptionTarget condition of conditions, its
// status and reason only (podutil.EvictedThroughEvictionAPI); nil without
// one, as for most pods.
func disruptionTarget(conditions []corev1.PodCondition) []corev1.PodCondition {
	for _, c := range conditions {
		if c.Type == corev1.DisruptionTarget {
			return []corev1.PodCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason}}
		}
	}
	return nil
}

// emptyDirs are the emptyDir volumes of volumes, their name and kind
// only; nil when there are none, as for most pods.
func emptyDirs(volumes []corev1.Volume) []corev1.Volume {
	var kept []corev1.Volume
	for _, v := range volumes {
		if v.EmptyDir != nil {
			kept = append(kept, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}
	}
	return kept
}

// sidecars are the init containers that run beside the others
// (restartPolicy Always), their name and policy only.
func sidecars(containers []corev1.Container) []corev1.Container {
	var kept []corev1.Container
	for _, c := range containers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			kept = append(kept, corev1.Container{Name: c.Name, RestartPolicy: c.RestartPolicy})
		}
	}
	return kept
}

// finishTimes are statuses with only each container's name and, once it
// terminated, when it finished.
func finishTimes(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(statuses) == 0 {
		return nil
	}
	kept := make([]corev1.ContainerStatus, len(statuses))
	for i, s := range statuses {
		kept[i].Name = s.Name
		if s.State.Terminated != nil {
			kept[i].State.Terminated = &corev1.ContainerStateTerminated{FinishedAt: s.State.Terminated.FinishedAt}
		}
	}
	return kept
}

// distinct is keys without repeats: readers that share a helper declare
// its annotations each (keptAnnotations counts each key once).
func distinct(keys []string) []string {
	out := slices.Clone(keys)
	slices.Sort(out)
	return slices.Compact(out)
}

// keptAnnotations are the annotations named by keep: the map itself when
// it holds no others, as most pods' do, else a copy of them.
func keptAnnotations(annotations map[string]string, keep []string) map[string]string {
	kept := 0
	for _, key := range keep {
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
	for _, key := range keep {
		if value, ok := annotations[key]; ok {
			trimmed[key] = value
		}
	}
	return trimmed
}

// TrimPodsStripManagedFieldsBut is a cache.TransformFunc for a factory of
// several informers (evictionrequest-controller's): pods through
// TrimPodKeeping(annotations...), every other object through
// StripManagedFieldsBut(managers...).
func TrimPodsStripManagedFieldsBut(annotations []string, managers ...string) func(obj any) (any, error) {
	annotations = distinct(annotations)
	strip := StripManagedFieldsBut(managers...)
	return func(obj any) (any, error) {
		if _, ok := obj.(*corev1.Pod); ok {
			return trimPod(obj, annotations)
		}
		return strip(obj)
	}
}
