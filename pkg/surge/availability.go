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
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// replacements counts the available pods of a Deployment that are not being
// replaced, and describes those that are not available yet, with when the
// last of them is expected to be (nil when that cannot be told).
func replacements(pods []*corev1.Pod, replaced map[types.UID]string, minReadySeconds int32, now time.Time) (available int32, waiting []string, expected *time.Time) {
	minReady := time.Duration(minReadySeconds) * time.Second
	for _, pod := range pods {
		if _, ok := replaced[pod.UID]; ok || pod.DeletionTimestamp != nil {
			continue
		}
		readySince := readySince(pod)
		switch {
		case readySince != nil && !now.Before(readySince.Add(minReady)):
			available++
			continue
		case readySince != nil:
			at := readySince.Add(minReady)
			if expected == nil || at.After(*expected) {
				expected = &at
			}
			waiting = append(waiting, fmt.Sprintf("pod %s is Ready, available after minReadySeconds (%ds)", pod.Name, minReadySeconds))
		default:
			waiting = append(waiting, fmt.Sprintf("pod %s is not Ready: %s", pod.Name, notReadyReason(pod)))
		}
	}
	sort.Strings(waiting)
	return available, waiting, expected
}

// readySince is when the pod became Ready, nil while it is not.
func readySince(pod *corev1.Pod) *time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			t := c.LastTransitionTime.Time
			return &t
		}
	}
	return nil
}

// notReadyReason tells why a pod is not Ready, from its phase and conditions.
func notReadyReason(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return strings.TrimSpace(fmt.Sprintf("%s, not scheduled: %s", pod.Status.Phase, c.Message))
		}
	}
	phase := string(pod.Status.Phase)
	if phase == "" {
		phase = "Pending"
	}
	if pod.Spec.NodeName == "" {
		return phase + ", not scheduled yet"
	}
	return fmt.Sprintf("%s on node %s", phase, pod.Spec.NodeName)
}
