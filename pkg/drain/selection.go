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
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
)

// PodAnnotationsRead are the pod annotations a drain's selection reads of
// the pods it is given (whether the Eviction API is used for one): the pod
// cache of a binary that drains from it keeps them.
var PodAnnotationsRead = podutil.EvictabilityAnnotations

// SkipReason says why a pod of a node gets no EvictionRequest, in the words
// kubectl drain uses.
type SkipReason string

// The pods a drain leaves alone: those the Eviction API is not used for
// (podutil.WhyNotEvictable).
const (
	// SkipDaemonSet: the DaemonSet controller would start the pod again on
	// the same node; a drain ignores it, as kubectl drain does.
	SkipDaemonSet SkipReason = "DaemonSet-managed"
	// SkipMirror: a mirror pod stands for a static pod of the kubelet.
	SkipMirror SkipReason = "mirror"
	// SkipTerminal: the pod is Succeeded or Failed; nothing is left to evict.
	SkipTerminal SkipReason = "terminal"
)

// SkipReasons are the reasons of Skip in the order reports list them.
var SkipReasons = []SkipReason{SkipDaemonSet, SkipMirror, SkipTerminal}

var skipReasonOf = map[podutil.NotEvictable]SkipReason{
	podutil.DaemonSetPod: SkipDaemonSet,
	podutil.MirrorPod:    SkipMirror,
	podutil.TerminalPod:  SkipTerminal,
}

// Skip returns why a pod of a node gets no EvictionRequest, or "" when it
// gets one. Pods that are terminating already get one too: their request
// completes once they are gone, so a drain waits for them like for the rest.
func Skip(pod *corev1.Pod) SkipReason {
	return skipReasonOf[podutil.WhyNotEvictable(pod)]
}

// Selection is the outcome of Select: the pods that get an EvictionRequest
// and, by reason, those that do not.
type Selection struct {
	// Evict are the pods that get an EvictionRequest, by namespace and name.
	Evict []*corev1.Pod
	// Skipped are the pods a drain leaves alone, by reason, each list by
	// namespace and name.
	Skipped map[SkipReason][]*corev1.Pod
	// Refused are the pods the policy refuses, by reason: a drain with any
	// requests nothing.
	Refused map[RefuseReason][]*corev1.Pod
	// Overridden are the pods of Evict the policy lets go although it
	// would refuse them otherwise, by reason, as kubectl drain warns.
	Overridden map[RefuseReason][]*corev1.Pod
}

// Select splits the pods of a node into those that get an EvictionRequest,
// those a drain skips and those policy refuses.
func Select(pods []*corev1.Pod, policy Policy) Selection {
	s := Selection{Skipped: map[SkipReason][]*corev1.Pod{}, Refused: map[RefuseReason][]*corev1.Pod{}, Overridden: map[RefuseReason][]*corev1.Pod{}}
	for _, pod := range pods {
		if reason := Skip(pod); reason != "" {
			s.Skipped[reason] = append(s.Skipped[reason], pod)
			continue
		}
		if reason := policy.Refuse(pod); reason != "" {
			s.Refused[reason] = append(s.Refused[reason], pod)
			continue
		}
		for _, reason := range policy.Overridden(pod) {
			s.Overridden[reason] = append(s.Overridden[reason], pod)
		}
		s.Evict = append(s.Evict, pod)
	}
	sortPods(s.Evict)
	for _, pods := range s.Skipped {
		sortPods(pods)
	}
	for _, pods := range s.Refused {
		sortPods(pods)
	}
	for _, pods := range s.Overridden {
		sortPods(pods)
	}
	return s
}

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

// Pods counts pods in words: "1 pod", "2 pods".
func Pods(n int) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}
