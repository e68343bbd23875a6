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
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BindClusterRole binds the ClusterRole role to user in ns (a RoleBinding
// named after both), as an admin gives a team Kubernetes' built-in edit or
// admin role in its namespace.
func (f *Framework) BindClusterRole(t testing.TB, ns, user, role string) {
	t.Helper()
	f.bind(t, ns, user, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role})
}

// GrantRole grants user rules in ns, through a Role and a RoleBinding named
// name; the namespace's deletion removes them.
func (f *Framework) GrantRole(t testing.TB, ns, user, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	if _, err := f.Kube.RbacV1().Roles(ns).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.bind(t, ns, user, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name})
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
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := f.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = f.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = f.Kube.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
}
