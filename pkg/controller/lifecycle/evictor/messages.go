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

package evictor

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
)

// The evictor's messages are the upstream pull request's
// (kubernetes/kubernetes#137396): responders, drains and runbooks read them.

// viaEviction is in the message of a pod the evictor evicted.
const viaEviction = "marked for deletion via the /eviction subresource"

// endedMessage says that the pod name with uid, now pod (nil when there is
// none), is gone or terminal.
func endedMessage(name string, uid types.UID, pod *corev1.Pod) string {
	switch {
	case pod == nil || pod.UID != uid:
		return fmt.Sprintf("%q pod has been deleted and fully terminated", name)
	case pod.DeletionTimestamp != nil:
		return fmt.Sprintf("%q pod has been deleted and fully terminated (pod phase=%q)", name, pod.Status.Phase)
	}
	return fmt.Sprintf("%q pod has been fully terminated (pod phase=%q)", name, pod.Status.Phase)
}

// attemptMessage says what an attempt on pod did; attempts counts the
// refused ones, this one included, and last is the message so far.
func attemptMessage(a eviction.Attempt, pod *corev1.Pod, attempts int32, last string) string {
	switch a.Result {
	case eviction.Terminating:
		how := " marked for deletion"
		if a.Granted || strings.Contains(last, viaEviction) {
			// The evictor's own eviction, not another's deletion.
			how = " " + viaEviction
		}
		return fmt.Sprintf("%q pod has been%s and is being terminated gracefully", pod.Name, how)
	case eviction.Evicted:
		return fmt.Sprintf("%q pod has been %s and will be terminated gracefully", pod.Name, viaEviction)
	case eviction.Refused:
		return fmt.Sprintf("%q pod deletion via the /eviction subresource failed %s: %v", pod.Name, policyutil.FormatAttempts(attempts), a.Err)
	}
	// Gone: the Eviction API found no such pod.
	return endedMessage(pod.Name, pod.UID, nil)
}
