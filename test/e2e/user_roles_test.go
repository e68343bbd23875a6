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
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// TestUserRolesGrantWhatEachActorNeeds asks kube-apiserver's RBAC, with
// the roles kube-controller-manager aggregates, what the overlays' roles
// let users do with EvictionRequests: editors request and withdraw but do
// not write status, which is the interceptors' (evictionrequest-interceptor,
// with the right to delete the pods of the namespaces it is bound in, which
// the server asks of every writer); requesters request
// (evictionrequest-requester); drainers cordon nodes
// (evictionrequest-drainer).
func TestUserRolesGrantWhatEachActorNeeds(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	f.BindClusterRole(t, ns, "editor", "edit")
	f.BindClusterRole(t, ns, "interceptor", "evictionrequest-interceptor")
	f.BindClusterRole(t, ns, "requester", "evictionrequest-requester")
	// Nodes are cluster-scoped: a drainer is bound cluster-wide.
	drainer := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-drainer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "evictionrequest-drainer"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: ns + "-drainer"}},
	}
	if _, err := f.Kube.RbacV1().ClusterRoleBindings().Create(t.Context(), drainer, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := f.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, drainer.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting ClusterRoleBinding %s: %v", drainer.Name, err)
		}
	})
	cases := []struct {
		user, verb, resource, subresource string
		allowed                           bool
	}{
		{"editor", "create", "evictionrequests", "", true},
		{"editor", "delete", "evictionrequests", "", true},
		{"editor", "update", "evictionrequests", "status", false},
		{"interceptor", "update", "evictionrequests", "status", true},
		{"interceptor", "create", "evictionrequests", "", false},
		// It may delete the pods it serves, as every writer of a request
		// must, and writes no Leases.
		{"interceptor", "delete", "pods", "", true},
		{"interceptor", "update", "leases", "", false},
		{"requester", "create", "evictionrequests", "", true},
		{"requester", "update", "evictionrequests", "status", false},
		{ns + "-drainer", "patch", "nodes", "", true},
		{ns + "-drainer", "patch", "nodes", "status", true},
		{ns + "-drainer", "create", "pods", "eviction", true},
		{"requester", "patch", "nodes", "", false},
	}
	for _, tc := range cases {
		group := v1alpha1.GroupName
		if tc.resource == "nodes" || tc.resource == "pods" {
			group = ""
		}
		// edit gains our rules once kube-controller-manager aggregates them.
		f.WaitForAuthorization(t, authorizationv1.SubjectAccessReviewSpec{
			User:               tc.user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: tc.verb, Group: group, Resource: tc.resource, Subresource: tc.subresource},
		}, tc.allowed)
	}
}

// An interceptor bound as docs/actors.md says (evictionrequest-interceptor
// in the namespace it serves, its leader-election role in its own
// namespace) writes the Leases of its own namespace only: not a node's
// heartbeat in kube-node-lease, not the server's in evictionrequest-system;
// and deletes the pods of the namespace it serves only. The surge
// interceptor writes its own Lease and no other; the bridge's service
// account updates its own webhook configuration and no other.
func TestInstalledIdentitiesWriteOnlyTheirOwn(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	interceptor := "system:serviceaccount:" + ns + ":db-operator"
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "db-operator-interceptor"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "evictionrequest-interceptor"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "db-operator"}},
	}
	if _, err := f.Kube.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindLeaderElection(t, ns, ns, "db-operator")
	const server, surge = "system:serviceaccount:evictionrequest-system:evictionrequest-apiserver", "system:serviceaccount:evictionrequest-system:evictionrequest-surge-interceptor"
	for _, tc := range []struct {
		user, verb, group, resource, namespace, name string
		allowed                                      bool
	}{
		{interceptor, "update", "coordination.k8s.io", "leases", ns, "db-operator", true},
		{interceptor, "update", "coordination.k8s.io", "leases", "kube-node-lease", "kwok-node-0", false},
		{interceptor, "update", "coordination.k8s.io", "leases", "evictionrequest-system", "evictionrequest-apiserver", false},
		{interceptor, "delete", "", "pods", ns, "db-0", true},
		{interceptor, "delete", "", "pods", "kube-system", "kube-proxy-0", false},
		{interceptor, "patch", "coordination.k8s.io", "evictionrequests/status", ns, "", true},
		{interceptor, "update", "coordination.k8s.io", "evictionrequests/controller", ns, "", false},
		{surge, "update", "coordination.k8s.io", "leases", "evictionrequest-system", "evictionrequest-surge-interceptor", true},
		{surge, "update", "coordination.k8s.io", "leases", "evictionrequest-system", "evictionrequest-apiserver", false},
		// It serves every namespace, and the server asks the right to
		// delete the pod of each writer of a request's status.
		{surge, "delete", "", "pods", ns, "db-0", true},
		{surge, "update", "coordination.k8s.io", "evictionrequests/controller", ns, "", false},
		{server, "update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "evictionrequest-eviction-bridge", true},
		{server, "update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "another-webhook", false},
	} {
		resource, subresource, _ := strings.Cut(tc.resource, "/")
		f.WaitForAuthorization(t, authorizationv1.SubjectAccessReviewSpec{
			User: tc.user, Groups: []string{"system:serviceaccounts", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: tc.namespace, Verb: tc.verb, Group: tc.group,
				Resource: resource, Subresource: subresource, Name: tc.name},
		}, tc.allowed)
	}
}
