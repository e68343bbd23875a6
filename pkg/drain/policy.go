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
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Policy is what a drain evicts beyond what kubectl drain evicts without
// its overrides: the pods it refuses unless told otherwise.
type Policy struct {
	// Force evicts pods that declare no controller, which nothing
	// recreates (kubectl drain --force).
	Force bool
	// DeleteEmptyDirData evicts pods with emptyDir volumes, whose data is
	// lost with them (kubectl drain --delete-emptydir-data).
	DeleteEmptyDirData bool
}

// RefuseReason says why a drain refuses a pod unless its Policy allows
// it, in kubectl drain's words.
type RefuseReason string

const (
	// RefuseUnmanaged: no controller recreates the pod elsewhere.
	RefuseUnmanaged RefuseReason = "that declare no controller"
	// RefuseEmptyDir: the pod's emptyDir data is lost with it.
	RefuseEmptyDir RefuseReason = "with local storage"
)

// RefuseReasons are the reasons of Refuse in the order reports list them.
var RefuseReasons = []RefuseReason{RefuseUnmanaged, RefuseEmptyDir}

// Refuse returns why p refuses to drain pod, or "" when it may. A pod
// refused for several reasons reports the first.
func (p Policy) Refuse(pod *corev1.Pod) RefuseReason {
	for _, reason := range RefuseReasons {
		if refused(pod, reason) && !p.allows(reason) {
			return reason
		}
	}
	return ""
}

// Overridden lists the reasons a pod would be refused for that p allows:
// kubectl drain warns of them.
func (p Policy) Overridden(pod *corev1.Pod) []RefuseReason {
	var reasons []RefuseReason
	for _, reason := range RefuseReasons {
		if refused(pod, reason) && p.allows(reason) {
			reasons = append(reasons, reason)
		}
	}
	return reasons
}

func (p Policy) allows(reason RefuseReason) bool {
	switch reason {
	case RefuseUnmanaged:
		return p.Force
	case RefuseEmptyDir:
		return p.DeleteEmptyDirData
	}
	return false
}

func refused(pod *corev1.Pod, reason RefuseReason) bool {
	switch reason {
	case RefuseUnmanaged:
		return metav1.GetControllerOf(pod) == nil
	case RefuseEmptyDir:
		for _, v := range pod.Spec.Volumes {
			if v.EmptyDir != nil {
				return true
			}
		}
	}
	return false
}

// RefusedError is a drain that refuses some pods, nil when it refuses
// none: kubectl drain's error, one line per reason, each with what
// overrides it (override names the flag or annotation).
func (s Selection) RefusedError(override func(RefuseReason) string) error {
	var lines []string
	for _, reason := range RefuseReasons {
		if pods := s.Refused[reason]; len(pods) > 0 {
			lines = append(lines, fmt.Sprintf("cannot request the eviction of Pods %s (%s to override): %s", reason, override(reason), PodList(pods)))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}

// PodList names pods as namespace/name, comma-separated, as kubectl drain
// lists them.
func PodList(pods []*corev1.Pod) string {
	names := make([]string, 0, len(pods))
	for _, pod := range pods {
		names = append(names, pod.Namespace+"/"+pod.Name)
	}
	return strings.Join(names, ", ")
}
