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

// Package pod holds the rules about a v1 Pod that the eviction of a pod
// depends on, in one place for every caller (the controller, the admission
// plugin, the drains, the surge interceptor), as Kubernetes keeps its own in
// k8s.io/kubernetes/pkg/api/v1/pod.
package pod

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// IsTerminal is true once the pod's containers will not run again: phase
// Succeeded or Failed (also after a graceful node shutdown).
func IsTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// IsTerminating is true once the pod is being deleted.
func IsTerminating(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil
}

// ReasonEvictionByEvictionAPI is the reason of the DisruptionTarget
// condition kube-apiserver's Eviction API sets on a pod it evicts
// (k8s.io/kubernetes pkg/registry/core/pod/storage/eviction.go), which
// k8s.io/api does not name.
const ReasonEvictionByEvictionAPI = "EvictionByEvictionAPI"

// EvictedThroughEvictionAPI is true when the Eviction API started the
// deletion of the pod: kube-apiserver marks a pod it evicts
// DisruptionTarget=True with reason EvictionByEvictionAPI as it deletes
// it, whoever asked.
func EvictedThroughEvictionAPI(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == ReasonEvictionByEvictionAPI
		}
	}
	return false
}

// TerminalTime is when pod stopped, as far as its status says: the later
// of its deletion time and the time its last container finished (sidecars
// included; unknown while any container has not terminated). Zero when
// neither is known, such as a pod whose phase alone was set terminal.
func TerminalTime(pod *corev1.Pod) time.Time {
	var at time.Time
	if pod.DeletionTimestamp != nil {
		at = pod.DeletionTimestamp.Time
	}
	if finished := finishTime(pod); finished.After(at) {
		at = finished
	}
	return at
}

// finishTime is when the last of pod's containers (and sidecars) finished,
// zero unless all of them did.
func finishTime(pod *corev1.Pod) time.Time {
	statuses := slices.Clone(pod.Status.ContainerStatuses)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			continue
		}
		if i := slices.IndexFunc(pod.Status.InitContainerStatuses, func(s corev1.ContainerStatus) bool { return s.Name == c.Name }); i >= 0 {
			statuses = append(statuses, pod.Status.InitContainerStatuses[i])
		}
	}
	var latest time.Time
	for _, s := range statuses {
		if s.State.Terminated == nil {
			return time.Time{}
		}
		if t := s.State.Terminated.FinishedAt.Time; t.After(latest) {
			latest = t
		}
	}
	return latest
}

// EvictabilityAnnotations are the pod annotations IsMirror and
// WhyNotEvictable read, for a reader of a trimmed pod cache that calls them
// to declare.
var EvictabilityAnnotations = []string{corev1.MirrorPodAnnotationKey}

// IsMirror is true for the API's copy of a kubelet's static pod.
func IsMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

// IsDaemonSetPod is true for a pod whose controller is an apps DaemonSet.
func IsDaemonSetPod(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "DaemonSet" {
		return false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	return err == nil && gv.Group == "apps"
}

// NotEvictable names the kind of a pod that the Eviction API is not used
// for; "" is a pod it may evict.
type NotEvictable string

// The kinds of pods the Eviction API is not used for, as the KEP's
// "Disruptive Eviction" section decides.
const (
	// MirrorPod stands for a static pod of the kubelet: deleting it
	// through the API does not stop its containers.
	MirrorPod NotEvictable = "mirror"
	// DaemonSetPod would be started again on the same node at once by its
	// DaemonSet controller.
	DaemonSetPod NotEvictable = "DaemonSet"
	// TerminalPod is Succeeded or Failed: its containers will not run
	// again, so there is nothing left to evict.
	TerminalPod NotEvictable = "terminal"
)

// WhyNotEvictable says why the Eviction API is not used for pod, or "" when
// it is. Pods that are terminating already are evictable: their eviction is
// done once they are gone.
func WhyNotEvictable(pod *corev1.Pod) NotEvictable {
	switch {
	case IsMirror(pod):
		return MirrorPod
	case IsDaemonSetPod(pod):
		return DaemonSetPod
	case IsTerminal(pod):
		return TerminalPod
	}
	return ""
}

// FromObject returns the pod an informer's event handler was given,
// unwrapping the tombstone of a deletion the informer did not see happen;
// false for anything else.
func FromObject(obj any) (*corev1.Pod, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	return pod, ok
}
