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

package artifacts

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
)

// clusterScoped are the kinds of the overlays without a namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "PriorityClass": true, "ClusterRole": true, "ClusterRoleBinding": true, "APIService": true,
	"FlowSchema": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"ValidatingWebhookConfiguration": true,
}

// Every overlay that MovesNamespace installs in another namespace through
// the kustomization of examples/namespace: each namespaced object is in
// it, and nothing names evictionrequest-system any more.
func TestEveryOverlayInstallsInAnotherNamespace(t *testing.T) {
	const ns = "team-evictions"
	for _, overlay := range Overlays {
		if !MovesNamespace(overlay) {
			continue
		}
		t.Run(overlay, func(t *testing.T) {
			objects, err := RenderWith(overlay, Install{Namespace: ns}, testCerts)
			if err != nil {
				t.Fatal(err)
			}
			if find(objects, "Namespace", ns) == nil {
				t.Errorf("no Namespace %s", ns)
			}
			for _, obj := range objects {
				if !clusterScoped[obj.GetKind()] && obj.GetNamespace() != ns {
					t.Errorf("%s %s is in namespace %q", obj.GetKind(), obj.GetName(), obj.GetNamespace())
				}
				if where := namesDefaultNamespace(t, obj); where != "" {
					t.Errorf("%s %s still names evictionrequest-system: %s", obj.GetKind(), obj.GetName(), where)
				}
			}
			// The monitoring RoleBinding names Prometheus where it runs.
			if rb := find(objects, "RoleBinding", "evictionrequest-prometheus"); rb != nil {
				subjects, _, _ := unstructured.NestedSlice(rb.Object, "subjects")
				if got := subjects[0].(map[string]interface{})["namespace"]; got != "monitoring" {
					t.Errorf("Prometheus' RoleBinding names namespace %v, want monitoring", got)
				}
			}
		})
	}
}

// namesDefaultNamespace returns the line of obj that names
// evictionrequest-system.
func namesDefaultNamespace(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, Namespace) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// The overlays install into Namespace, the namespace the components
// default their Leases to outside a pod.
func TestTheDefaultNamespaceIsOneName(t *testing.T) {
	if find(render(t, "default"), "Namespace", Namespace) == nil {
		t.Errorf("the default overlay does not create namespace %s", Namespace)
	}
	if options.DefaultNamespace != Namespace {
		t.Errorf("the components default to namespace %s, the overlays install into %s", options.DefaultNamespace, Namespace)
	}
}
