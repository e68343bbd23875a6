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

package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BindClusterRole binds the ClusterRole role to user in ns (a RoleBinding
// named after both), as an admin gives a team Kubernetes' built-in edit or
// admin role in its namespace.
func (f *Framework) BindClusterRole(t testing.TB, ns, user, role string) {
	t.Helper()
	f.bind(t, ns, user, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role})
	clusterRole, err := f.Kube.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.waitUntilAuthorized(t, ns, user, clusterRole.Rules)
}

// GrantRole grants user rules in ns, through a Role and a RoleBinding named
// name; the namespace's deletion removes them.
func (f *Framework) GrantRole(t testing.TB, ns, user, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	if _, err := f.Kube.RbacV1().Roles(ns).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.bind(t, ns, user, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name})
	f.waitUntilAuthorized(t, ns, user, rules)
}

func (f *Framework) bind(t testing.TB, ns, user string, role rbacv1.RoleRef) {
	t.Helper()
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-" + user},
		RoleRef:    role,
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := f.Kube.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// GrantCluster grants user rules cluster-wide, through a ClusterRole and a
// ClusterRoleBinding named name, deleted when the test ends.
func (f *Framework) GrantCluster(t testing.TB, user, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := f.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Cluster-scoped: the namespace's deletion would not remove them, so
	// they go at the end of the test even when a step below fails it.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = f.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = f.Kube.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := f.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitUntilAuthorized(t, "", user, rules)
}

// waitUntilAuthorized waits until kube-apiserver's authorizer lets user do
// what the first resource rule of rules allows, in ns: the RBAC authorizer
// reads bindings from its informers, so a binding just created may not
// count yet for the next call, as upstream's e2e framework waits
// (WaitForNamedAuthorizationUpdate).
func (f *Framework) waitUntilAuthorized(t testing.TB, ns, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	attrs, ok := firstResourceRule(ns, rules)
	if !ok {
		return
	}
	f.WaitForAuthorization(t, authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: attrs}, true)
}

// WaitForAuthorization waits until kube-apiserver's authorizer answers the
// SubjectAccessReview of spec with allowed: what RBAC allows follows its
// informers (a binding just made, a ClusterRole kube-controller-manager
// aggregates), so one review could read the moment before.
func (f *Framework) WaitForAuthorization(t testing.TB, spec authorizationv1.SubjectAccessReviewSpec, allowed bool) {
	t.Helper()
	what := fmt.Sprintf("the authorizer to answer %v to %s", allowed, spec.User)
	if a := spec.ResourceAttributes; a != nil {
		what += fmt.Sprintf(" %s %s/%s %s/%s", a.Verb, a.Resource, a.Subresource, a.Namespace, a.Name)
	}
	Eventually(t, 30*time.Second, what, func(ctx context.Context) error {
		got, err := f.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if got.Status.Allowed != allowed {
			return fmt.Errorf("allowed %v (%s)", got.Status.Allowed, got.Status.Reason)
		}
		return nil
	})
}

// firstResourceRule is the request the first rule of rules about resources
// allows, in ns: its first verb, group and resource (and subresource, and
// name); false when no rule names a resource.
func firstResourceRule(ns string, rules []rbacv1.PolicyRule) (*authorizationv1.ResourceAttributes, bool) {
	for _, r := range rules {
		if len(r.Verbs) == 0 || len(r.APIGroups) == 0 || len(r.Resources) == 0 {
			continue
		}
		resource, subresource, _ := strings.Cut(r.Resources[0], "/")
		attrs := &authorizationv1.ResourceAttributes{Namespace: ns, Verb: r.Verbs[0], Group: r.APIGroups[0], Resource: resource, Subresource: subresource}
		if len(r.ResourceNames) > 0 {
			attrs.Name = r.ResourceNames[0]
		}
		return attrs, true
	}
	return nil, false
}
