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

// Package drain holds the rules of draining a node through EvictionRequests
// that the kubectl plugin and the server's node drain requester share: which
// pods of a node get a request, how a node is cordoned, and how far the
// eviction of each pod has come. Both callers use this one package so that
// they agree on every pod.
package drain

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SkipReason says why a pod of a node gets no EvictionRequest.
type SkipReason string

// The pods a drain leaves alone, as the KEP's "Disruptive Eviction" section
// decides: DaemonSet and mirror pods, which the Eviction API must not evict,
// and pods that already terminated.
const (
	// SkipDaemonSet: the DaemonSet controller would start the pod again on
	// the same node; a drain ignores it, as kubectl drain does.
	SkipDaemonSet SkipReason = "DaemonSet-managed"
	// SkipMirror: a mirror pod stands for a static pod of the kubelet;
	// deleting it through the API does not stop its containers.
	SkipMirror SkipReason = "mirror"
	// SkipTerminal: the pod is Succeeded or Failed; its containers will not
	// run again, so there is nothing left to evict.
	SkipTerminal SkipReason = "terminal"
)

// IsMirrorPod is true for the API's copy of a kubelet's static pod.
func IsMirrorPod(pod *corev1.Pod) bool {
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

// IsTerminal is true once the pod's containers will not run again: phase
// Succeeded or Failed (also after a graceful node shutdown).
func IsTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// Skip returns why a pod of a node gets no EvictionRequest, or "" when it
// gets one. Pods that are terminating already get one too: their request
// completes once they are gone, so a drain waits for them like for the rest.
func Skip(pod *corev1.Pod) SkipReason {
	switch {
	case IsMirrorPod(pod):
		return SkipMirror
	case IsDaemonSetPod(pod):
		return SkipDaemonSet
	case IsTerminal(pod):
		return SkipTerminal
	}
	return ""
}

// Selection is the outcome of Select: the pods that get an EvictionRequest
// and, by reason, those that do not.
type Selection struct {
	// Evict are the pods that get an EvictionRequest, by namespace and name.
	Evict []*corev1.Pod
	// Skipped are the other pods by reason, each list by namespace and name.
	Skipped map[SkipReason][]*corev1.Pod
}

// Select splits the pods of a node into those that get an EvictionRequest
// and those that do not.
func Select(pods []*corev1.Pod) Selection {
	s := Selection{Skipped: map[SkipReason][]*corev1.Pod{}}
	for _, pod := range pods {
		if reason := Skip(pod); reason != "" {
			s.Skipped[reason] = append(s.Skipped[reason], pod)
		} else {
			s.Evict = append(s.Evict, pod)
		}
	}
	sortPods(s.Evict)
	for _, pods := range s.Skipped {
		sortPods(pods)
	}
	return s
}

// SkipReasons are the reasons of Skip in the order reports list them.
var SkipReasons = []SkipReason{SkipDaemonSet, SkipMirror, SkipTerminal}

func sortPods(pods []*corev1.Pod) {
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
}

// SkippedSummary counts the skipped pods by reason, for example
// "1 DaemonSet-managed, 2 mirror"; empty when none was skipped.
func (s Selection) SkippedSummary() string {
	var parts []string
	for _, reason := range SkipReasons {
		if n := len(s.Skipped[reason]); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, reason))
		}
	}
	return strings.Join(parts, ", ")
}
