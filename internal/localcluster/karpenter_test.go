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

package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Karpenter the harness cannot start fails the start naming what is
// missing, before any process runs: the binary, then the CRDs beside it.
func TestStartKarpenterNamesWhatIsMissing(t *testing.T) {
	binDir := t.TempDir()
	c := &Cluster{cfg: Config{BinDir: binDir}}
	err := c.startKarpenter(t.Context())
	if err == nil || !strings.Contains(err.Error(), "karpenter is not built") {
		t.Fatalf("without the binary: %v, want it named", err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "karpenter"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	err = c.startKarpenter(t.Context())
	if want := "no CRDs of Karpenter in " + filepath.Join(binDir, karpenterCRDDir); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("without the CRDs: %v, want %q", err, want)
	}
}

// A NodePool of NewKarpenterNodePool is of the harness's node class, never
// expires, and takes Karpenter's defaults for what the options leave out.
func TestNewKarpenterNodePool(t *testing.T) {
	for _, tc := range []struct {
		name                                 string
		opts                                 KarpenterNodePoolOptions
		consolidateAfter, budget, termPeriod string
	}{
		{name: "defaults", consolidateAfter: "Never", budget: "10%"},
		{
			name: "options",
			opts: KarpenterNodePoolOptions{ConsolidateAfter: "5s", Budget: "1", TerminationGracePeriod: "20s",
				Labels: map[string]string{"a": "b"}, Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
			consolidateAfter: "5s", budget: "1", termPeriod: "20s",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := NewKarpenterNodePool("pool", tc.opts).Object
			str := func(fields ...string) string {
				v, _, _ := unstructured.NestedString(pool, fields...)
				return v
			}
			if got := str("spec", "disruption", "consolidateAfter"); got != tc.consolidateAfter {
				t.Errorf("consolidateAfter %q, want %q", got, tc.consolidateAfter)
			}
			budgets, _, _ := unstructured.NestedSlice(pool, "spec", "disruption", "budgets")
			if len(budgets) != 1 || budgets[0].(map[string]any)["nodes"] != tc.budget {
				t.Errorf("budgets %v, want nodes %q", budgets, tc.budget)
			}
			if got := str("spec", "template", "spec", "terminationGracePeriod"); got != tc.termPeriod {
				t.Errorf("terminationGracePeriod %q, want %q", got, tc.termPeriod)
			}
			if got := str("spec", "template", "spec", "expireAfter"); got != "Never" {
				t.Errorf("expireAfter %q, want Never", got)
			}
			if got := str("spec", "template", "spec", "nodeClassRef", "name"); got != KarpenterNodeClass {
				t.Errorf("nodeClassRef %q, want %q", got, KarpenterNodeClass)
			}
			taints, _, _ := unstructured.NestedSlice(pool, "spec", "template", "spec", "taints")
			if len(taints) != len(tc.opts.Taints) {
				t.Errorf("taints %v, want %v", taints, tc.opts.Taints)
			}
			if got := str("spec", "template", "metadata", "labels", "a"); got != tc.opts.Labels["a"] {
				t.Errorf("label a %q, want %q", got, tc.opts.Labels["a"])
			}
		})
	}
}
