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
	"context"
	"fmt"
	"testing"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// A writer of evictions/status, with no more rights than a responder's,
// says the Eviction of a running pod evicted it, ending the active
// responder's turn in the same write, which kube-apiserver 1.37 accepts:
// our controller does not report it on the request, which stays open, and
// a new Eviction starts with the pod's responders from the first.
// Kubernetes 1.38's controllers report it (docs/upstream.md).
func TestAStatusWriterCannotEndTheRequestOfARunningPod(t *testing.T) {
	if framework.UpstreamControllers() {
		t.Skip("Kubernetes 1.38's controllers report an Eviction's TargetEvicted as written")
	}
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const writer = "status-writer"
	grantResponderRights(t, ns, writer)
	client, err := kubernetes.NewForConfig(f.ImpersonatingConfig(writer))
	if err != nil {
		t.Fatal(err)
	}
	// No responder runs: the migrator keeps its turn while the test writes.
	pod := podWith(t, ns, "db-0", wrappers.Responder(migrator, 5000))
	er := framework.RequestEviction(t, keptRequester(t), pod)
	first := f.WaitForEviction(t, pod, "the migrator's turn", framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive))

	framework.Eventually(t, time.Minute, "the writer's forged TargetEvicted accepted", func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ev, err := client.LifecycleV1alpha1().Evictions(ns).Get(ctx, first.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for i := range ev.Status.TargetResponders {
				if ev.Status.TargetResponders[i].Name == migrator {
					ev.Status.TargetResponders[i].State = lifecyclev1alpha1.ResponderStateInterrupted
				}
			}
			now := metav1.Now()
			ev.Status.Conditions = []metav1.Condition{
				{Type: string(lifecyclev1alpha1.EvictionConditionFailed), Status: metav1.ConditionFalse,
					Reason: string(lifecyclev1alpha1.EvictionConditionReasonSucceeded), LastTransitionTime: now},
				{Type: string(lifecyclev1alpha1.EvictionConditionTargetEvicted), Status: metav1.ConditionTrue,
					Reason: string(lifecyclev1alpha1.EvictionConditionReasonPodDeleted), Message: "written by a status writer", LastTransitionTime: now},
			}
			_, err = client.LifecycleV1alpha1().Evictions(ns).UpdateStatus(ctx, ev, metav1.UpdateOptions{})
			return err
		})
	})

	second := f.WaitForEviction(t, pod, "a new Eviction with the migrator's turn", func(ev *lifecyclev1alpha1.Eviction) error {
		if ev.Name == first.Name {
			return fmt.Errorf("the forged Eviction")
		}
		return framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive)(ev)
	})
	got, err := f.Kube.LifecycleV1alpha1().EvictionRequests(ns).Get(ctx, er.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lifecycleutil.IsRequestFinished(got) || lifecycleutil.IsTrue(got.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted) {
		t.Errorf("the request of the running pod reports %+v once %s started, want it open", got.Status.Conditions, second.Name)
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the pod: %v, want it running", err)
	}
}

// grantResponderRights grants user in ns what a responder needs of
// Evictions: read them and write their status.
func grantResponderRights(t *testing.T, ns, user string) {
	t.Helper()
	ctx := t.Context()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{lifecyclev1alpha1.GroupName}, Resources: []string{"evictions"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{lifecyclev1alpha1.GroupName}, Resources: []string{"evictions/status"}, Verbs: []string{"update", "patch"}},
	}}
	if _, err := f.Kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := f.Kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
