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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// On lifecycle.k8s.io too, a drain held by a responder that never answers
// escalates at its deadline: evict evicts the pod through the Eviction API
// without waiting for the responder's 20-minute heartbeat deadline.
func TestPluginDrainEscalatesAtItsDeadline(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "db-0", framework.PodOptions{Node: node, Mutate: func(p *corev1.Pod) {
		p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(migrator, 5000)}
	}})
	r := f.RunCommand(t, 2*time.Minute, pluginBinary, "drain", node, "--force", "--deadline=5s", "--on-deadline=evict", "--timeout=60s")
	if r.Err != nil {
		t.Fatalf("the drain: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "deadline passed: evicted through the Eviction API") {
		t.Errorf("the drain does not say it escalated:\n%s", r.Stdout)
	}
	f.WaitForPodGone(t, ns, pod.Name)
}
