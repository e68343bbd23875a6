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

package lifecycle

import (
	"fmt"
	"strings"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

// newEvictionName names the next Eviction of the pod podName among
// existing: pod-<n>-<pod name>, n one more than the highest of the pod's
// Evictions, as the upstream pull request names them. A name cut at the
// length limit shares its counter with every pod name it is a prefix of.
func newEvictionName(podName string, existing []*lifecyclev1alpha1.Eviction) string {
	highest := 0
	for _, ev := range existing {
		n, namePod, ok := lifecycleutil.EvictionNameCounter(ev.Name)
		if !ok {
			continue
		}
		if namePod != podName && (len(ev.Name) < validation.DNS1123SubdomainMaxLength-2 || !strings.HasPrefix(podName, namePod)) {
			continue
		}
		highest = max(highest, n)
	}
	name := fmt.Sprintf("pod-%d-%s", highest+1, podName)
	if len(name) > validation.DNS1123SubdomainMaxLength {
		name = strings.TrimRight(name[:validation.DNS1123SubdomainMaxLength], "-.")
	}
	return name
}
