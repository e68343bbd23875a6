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

package e2e

import (
	"testing"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// The real kubelet runs a pod, and stops it when it is deleted.
func TestKubeletRunsAndStopsAPod(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewKubeletNode(t)
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{Node: node.Name, Mutate: framework.OnKubeletNode})
	f.MustKubectl(t, "delete", "pod", "-n", ns, pod.Name, "--timeout=60s")
}
