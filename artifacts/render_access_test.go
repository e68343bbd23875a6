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
	"regexp"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
)

// The policy's allow-list of k8s.io interceptor names is the server's.
func TestThePolicyAllowsTheServersKubernetesInterceptors(t *testing.T) {
	policy := find(render(t, "default"), "ValidatingAdmissionPolicy", "evictionrequest-pod-interceptors")
	validations, _, _ := unstructured.NestedSlice(policy.Object, "spec", "validations")
	found := false
	for _, v := range validations {
		expression, _ := v.(map[string]any)["expression"].(string)
		if !strings.Contains(expression, "k8s.io") {
			continue
		}
		found = true
		names := sets.New[string]()
		for _, m := range regexp.MustCompile(`'([a-z.]+\.k8s\.io)'`).FindAllStringSubmatch(expression, -1) {
			names.Insert(m[1])
		}
		names.Delete(".k8s.io")
		if !names.Equal(validation.AllowedKubernetesInterceptors) {
			t.Errorf("the policy allows %v, the server %v", sets.List(names), sets.List(validation.AllowedKubernetesInterceptors))
		}
	}
	if !found {
		t.Error("no validation of k8s.io names in the policy")
	}
}

// Users edit requests but only interceptors write their status, with the
// right to delete the pods they serve that the server asks of every writer;
// the roles an interceptor, a requester and a drainer need ship ready to
// bind, and none of them, nor any other role the install ships, holds the
// eviction request controller's right (evictionrequests/controller), which
// only the server's own loopback identity uses.
func TestUserRoles(t *testing.T) {
	objects := render(t, "default")
	rulesOf := func(name string) []rbacv1.PolicyRule {
		obj := find(objects, "ClusterRole", name)
		if obj == nil {
			t.Fatalf("no ClusterRole %s", name)
		}
		var role rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
			t.Fatal(err)
		}
		return role.Rules
	}
	if allows(rulesOf("evictionrequest-edit"), "evictionrequests/status", "update") {
		t.Error("the aggregate-to-edit role lets every editor write the status interceptors own")
	}
	for role, want := range map[string][]string{
		"evictionrequest-interceptor":                 {"evictionrequests/status update", "pods delete"},
		"evictionrequest-interceptor-leader-election": {"leases update"},
		"evictionrequest-requester":                   {"evictionrequests create", "pods delete"},
		"evictionrequest-drainer":                     {"nodes patch"},
	} {
		for _, w := range want {
			resource, verb, _ := strings.Cut(w, " ")
			if !allows(rulesOf(role), resource, verb) {
				t.Errorf("%s does not allow %s", role, w)
			}
		}
	}
	// An interceptor writes no Leases: the leader-election role is bound
	// in its own namespace.
	if allows(rulesOf("evictionrequest-interceptor"), "leases", "update") {
		t.Error("evictionrequest-interceptor allows leases update")
	}
	for _, obj := range objects {
		if obj.GetKind() != "ClusterRole" && obj.GetKind() != "Role" {
			continue
		}
		var role rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
			t.Fatal(err)
		}
		for _, r := range role.Rules {
			if slices.Contains(r.Resources, "evictionrequests/controller") || slices.Contains(r.Resources, "evictionrequests/*") || slices.Contains(r.Resources, "*") {
				t.Errorf("%s %s grants the eviction request controller's right: %+v", obj.GetKind(), obj.GetName(), r)
			}
		}
	}
}
