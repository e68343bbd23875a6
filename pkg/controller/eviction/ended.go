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

package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
)

// Ending is what became of a target pod that no eviction needs any more.
type Ending string

const (
	// PodDeleted: the pod is gone, or replaced by a pod of its name with
	// another UID.
	PodDeleted Ending = "PodDeleted"
	// PodTerminal: the pod reached phase Succeeded or Failed, for example
	// after a graceful node shutdown.
	PodTerminal Ending = "PodTerminal"
)

// Ended says whether the pod name with uid no longer needs an eviction, and
// why, given pod, the pod of that name as it is now (nil when there is
// none).
func Ended(pod *corev1.Pod, name string, uid types.UID) (ending Ending, message string) {
	switch {
	case pod == nil:
		return PodDeleted, fmt.Sprintf("Pod %s was deleted.", name)
	case pod.UID != uid:
		return PodDeleted, fmt.Sprintf("Pod %s with UID %s was deleted; the pod of that name now has UID %s.", name, uid, pod.UID)
	case podutil.IsTerminal(pod):
		message = fmt.Sprintf("Pod %s reached phase %s", pod.Name, pod.Status.Phase)
		if pod.Status.Reason != "" {
			message += fmt.Sprintf(" (%s: %s)", pod.Status.Reason, pod.Status.Message)
		}
		return PodTerminal, message + "."
	}
	return "", ""
}
