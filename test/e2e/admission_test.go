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
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

func TestAdmissionResolvesInterceptorsAndLabelsFromThePod(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	pod := f.CreatePod(t, ns, "sensitive-app", framework.PodOptions{
		Interceptors: []string{parkedInterceptor, "replicaset.apps.k8s.io", "deployment.apps.k8s.io", "sensitive-workload-operator.fruit-company.com"},
		Labels:       map[string]string{"app": "nginx", "team": "blueberry"},
	})
	er := framework.NewEvictionRequest(pod, "nodemaintenance.k8s.io")
	er.Labels = map[string]string{"team": "set-by-requester", "drain": "node-z"}
	created, err := f.EvictionRequests(ns).Create(t.Context(), er, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var interceptors []string
	for _, i := range created.Spec.Interceptors {
		interceptors = append(interceptors, i.Name)
	}
	want := []string{parkedInterceptor, "replicaset.apps.k8s.io", "deployment.apps.k8s.io", "sensitive-workload-operator.fruit-company.com"}
	if diff := cmp.Diff(want, interceptors); diff != "" {
		t.Errorf("spec.interceptors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"app": "nginx", "team": "blueberry", "drain": "node-z"}, created.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}

	// Requesters find the requests of a workload by its pod labels.
	out := f.MustKubectl(t, "get", "evr", "-n", ns, "-l", "app=nginx", "-o", "name")
	if !strings.Contains(out, created.Name) {
		t.Errorf("kubectl get evr -l app=nginx does not list %s:\n%s", created.Name, out)
	}
}

func TestAdmissionRefusesRequestsThatDoNotMatchAPod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "web-0")
	client := f.EvictionRequests(ns)

	cases := map[string]struct {
		mutate func(*v1alpha1.EvictionRequest)
		field  string
	}{
		"no such pod": {func(er *v1alpha1.EvictionRequest) { er.Spec.Target.PodRef.Name = "web-9" }, "spec.target.podRef.name"},
		"another UID": {func(er *v1alpha1.EvictionRequest) {
			er.Name = "00000000-0000-4000-8000-000000000000"
			er.Spec.Target.PodRef.UID = er.Name
		}, "spec.target.podRef.uid"},
		"interceptors set by the requester": {func(er *v1alpha1.EvictionRequest) {
			er.Spec.Interceptors = []v1alpha1.Interceptor{{Name: "sneaky.example.com"}}
		}, "spec.interceptors"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			er := framework.NewEvictionRequest(pod, "nodemaintenance.k8s.io")
			tc.mutate(er)
			_, err := client.Create(ctx, er, metav1.CreateOptions{})
			if fields := invalidFields(t, err); !slices.Contains(fields, tc.field) {
				t.Errorf("422 names %v, want %s", fields, tc.field)
			}
		})
	}
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("refused creations left %d EvictionRequests behind", len(list.Items))
	}
}

func TestAdmissionRefusesAnInvalidInterceptorAnnotation(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	// The pod's annotation is one the ValidatingAdmissionPolicy refuses;
	// where it is not applied, the server refuses it in turn.
	exemptFromInterceptorPolicy(t, ns)
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{Interceptors: []string{"fine.example.com", "actor-a.k8s.io"}})
	_, err := f.EvictionRequests(ns).Create(t.Context(), framework.NewEvictionRequest(pod, "nodemaintenance.k8s.io"), metav1.CreateOptions{})
	if fields := invalidFields(t, err); !slices.Contains(fields, "spec.interceptors[1].name") {
		t.Errorf("422 names %v, want spec.interceptors[1].name", fields)
	}
	if !strings.Contains(err.Error(), v1alpha1.PodInterceptorsAnnotation) || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("the refusal %q does not say the annotation holds a reserved name", err)
	}
}

func TestAdmissionAcceptsAPodCreatedAMomentBefore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	for i := 0; i < 5; i++ {
		pod, err := f.Kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fresh-%d", i), Namespace: ns},
			Spec:       corev1.PodSpec{NodeName: f.NodeNames[0], Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// No wait: the server's pod cache may not have the pod yet.
		if _, err := f.EvictionRequests(ns).Create(ctx, framework.NewEvictionRequest(pod, "descheduler.example.com"), metav1.CreateOptions{}); err != nil {
			t.Errorf("EvictionRequest for a pod created a moment before: %v", err)
		}
	}
}

func TestAdmissionLocksRequesters(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)

	t.Run("under Forbid", func(t *testing.T) {
		er := f.CreateEvictionRequest(t, parkedPod(t, ns, "forbid-0"), "nodemaintenance.k8s.io")
		setStatus(t, ns, er.Name, func(er *v1alpha1.EvictionRequest) {
			er.Status.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Forbid)
		})
		err := updateRequesters(t, ns, er.Name)
		if fields := invalidFields(t, err); !slices.Contains(fields, "spec.requesters") || !strings.Contains(err.Error(), "Forbid") {
			t.Errorf("removing the last requester under Forbid: %v, want a 422 on spec.requesters naming Forbid", err)
		}
		r := f.Kubectl(t, "patch", "evr", "-n", ns, er.Name, "--type=merge", "-p", `{"spec":{"requesters":[{"name":"nodemaintenance.k8s.io"},{"name":"descheduler.example.com"}]}}`)
		if r.Err == nil || !strings.Contains(r.Stderr, "spec.requesters") {
			t.Errorf("kubectl patch of requesters under Forbid: err %v, stderr %q; want a refusal naming spec.requesters", r.Err, r.Stderr)
		}
		setStatus(t, ns, er.Name, func(er *v1alpha1.EvictionRequest) {
			er.Status.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Allow)
		})
		if err := updateRequesters(t, ns, er.Name); err != nil {
			t.Errorf("removing the last requester under Allow: %v", err)
		}
	})
	t.Run("after Complete", func(t *testing.T) {
		er := f.CreateEvictionRequest(t, parkedPod(t, ns, "complete-0"), "nodemaintenance.k8s.io")
		setStatus(t, ns, er.Name, func(er *v1alpha1.EvictionRequest) {
			er.Status.ActiveInterceptorName = nil
			er.Status.Conditions = append(er.Status.Conditions, metav1.Condition{
				Type: string(v1alpha1.EvictionRequestComplete), Status: metav1.ConditionTrue, Reason: "PodTerminated", Message: "set by the test",
				LastTransitionTime: metav1.Now(),
			})
		})
		err := updateRequesters(t, ns, er.Name, "nodemaintenance.k8s.io", "descheduler.example.com")
		if fields := invalidFields(t, err); !slices.Contains(fields, "spec.requesters") || !strings.Contains(err.Error(), "Complete") {
			t.Errorf("adding a requester after Complete: %v, want a 422 on spec.requesters naming Complete", err)
		}
	})
}

func TestAdmissionGuardsDeletionUnderForbid(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	client := f.EvictionRequests(ns)

	forbid := func(name string) {
		setStatus(t, ns, name, func(er *v1alpha1.EvictionRequest) {
			er.Status.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Forbid)
		})
	}
	running := f.CreateEvictionRequest(t, parkedPod(t, ns, "running-0"), "nodemaintenance.k8s.io")
	forbid(running.Name)
	failedPod := parkedPod(t, ns, "failed-0")
	failed := f.CreateEvictionRequest(t, failedPod, "nodemaintenance.k8s.io")
	forbid(failed.Name)
	gonePod := parkedPod(t, ns, "gone-0")
	gone := f.CreateEvictionRequest(t, gonePod, "nodemaintenance.k8s.io")
	forbid(gone.Name)

	t.Run("refused while the pod runs", func(t *testing.T) {
		err := client.Delete(ctx, running.Name, metav1.DeleteOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "evictionRequestCancellationPolicy is Forbid") {
			t.Errorf("delete under Forbid while the pod runs: %v, want 403 naming the cancellation policy", err)
		}
	})
	t.Run("collection deletion spares it", func(t *testing.T) {
		r := f.Kubectl(t, "delete", "evr", "-n", ns, "--all")
		if r.Err == nil || !strings.Contains(r.Stderr, "Forbid") {
			t.Errorf("kubectl delete evr --all: err %v, stderr %q; want a refusal naming Forbid", r.Err, r.Stderr)
		}
		if _, err := client.Get(ctx, running.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("the Forbid request of a running pod is gone after delete --all: %v", err)
		}
	})
	t.Run("allowed once the pod terminated", func(t *testing.T) {
		pod := failedPod.DeepCopy()
		pod.Status.Phase = corev1.PodFailed
		pod.Status.Reason = "Terminated"
		pod.Status.Message = "Pod was terminated in response to imminent node shutdown."
		if _, err := f.Kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := client.Delete(ctx, failed.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete under Forbid after the pod failed: %v", err)
		}
	})
	t.Run("allowed once the pod is gone", func(t *testing.T) {
		if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, gonePod.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, time.Minute, "the EvictionRequest of a deleted pod to be deletable", func(ctx context.Context) error {
			err := client.Delete(ctx, gone.Name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
	})
}

// TestAdmissionRequiresPermissionToDeleteThePod gives a user full access to
// evictionrequests but not to pods: every write is refused with a 403 that
// names the missing permission, until the user may delete pods.
func TestAdmissionRequiresPermissionToDeleteThePod(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "web-0")
	const user = "evr-editor"
	grant := func(name string, rule rbacv1.PolicyRule) { grantRole(t, ns, user, name, rule) }
	grant("evr-editor", rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"evictionrequests", "evictionrequests/status"}, Verbs: []string{"*"}})

	manifest := fmt.Sprintf(`apiVersion: coordination.k8s.io/v1alpha1
kind: EvictionRequest
metadata: {name: %s, namespace: %s}
spec:
  target: {podRef: {name: %s, uid: %s}}
  requesters: [{name: descheduler.example.com}]
`, pod.UID, ns, pod.Name, pod.UID)
	framework.Eventually(t, time.Minute, "the RBAC of "+user+" to reach the server", func(ctx context.Context) error {
		r := f.KubectlWithInput(t, manifest, "--as="+user, "create", "-f", "-")
		switch {
		case r.Err == nil:
			return fmt.Errorf("created without permission to delete the pod")
		case strings.Contains(r.Stderr, `cannot delete pod "web-0"`) && strings.Contains(r.Stderr, `verb "delete" on resource "pods"`):
			return nil
		default:
			return fmt.Errorf("%v: %s", r.Err, r.Stderr)
		}
	})

	grant("pod-deleter", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}})
	// The server caches authorization decisions for a few seconds.
	framework.Eventually(t, time.Minute, user+" to create the EvictionRequest once it may delete the pod", func(ctx context.Context) error {
		r := f.KubectlWithInput(t, manifest, "--as="+user, "create", "-f", "-")
		if r.Err != nil {
			return fmt.Errorf("%v: %s", r.Err, r.Stderr)
		}
		return nil
	})
}

// grantRole grants user rules in ns, through a Role and a RoleBinding
// named name.
func grantRole(t *testing.T, ns, user, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := t.Context()
	if _, err := f.Kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A user who may delete only some pods (a Role with resourceNames) writes
// the EvictionRequests of those pods and is refused, naming the pod, for
// the others: the server's cheaper question about the whole namespace
// comes first, and is as strict as the one about each pod.
func TestAdmissionAllowsOnlyThePodsTheWriterMayDelete(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	const user = "web-operator"
	web, db := parkedPod(t, ns, "web-0"), parkedPod(t, ns, "db-0")
	grantRole(t, ns, user, "evr-editor", rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"evictionrequests"}, Verbs: []string{"*"}})
	grantRole(t, ns, user, "web-deleter", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{web.Name}, Verbs: []string{"delete"}})
	manifest := func(pod *corev1.Pod) string {
		return fmt.Sprintf("apiVersion: coordination.k8s.io/v1alpha1\nkind: EvictionRequest\nmetadata: {name: %s, namespace: %s}\n"+
			"spec:\n  target: {podRef: {name: %s, uid: %s}}\n  requesters: [{name: descheduler.example.com}]\n", pod.UID, ns, pod.Name, pod.UID)
	}
	// The server caches authorization decisions for a few seconds.
	framework.Eventually(t, time.Minute, user+" to request the eviction of "+web.Name, func(ctx context.Context) error {
		if r := f.KubectlWithInput(t, manifest(web), "--as="+user, "create", "-f", "-"); r.Err != nil {
			return fmt.Errorf("%v: %s", r.Err, r.Stderr)
		}
		return nil
	})
	r := f.KubectlWithInput(t, manifest(db), "--as="+user, "create", "-f", "-")
	if r.Err == nil || !strings.Contains(r.Stderr, `cannot delete pod "db-0"`) {
		t.Errorf("%s requested the eviction of db-0, which it may not delete: %v\n%s", user, r.Err, r.Stderr)
	}
}

// TestPodDeleteAuthorizationOnEveryWritePath gives a user every right on
// evictionrequests and their status and none on pods: each way of writing a
// request (update, each kind of patch, server-side apply, /status by update,
// patch and apply, delete, deleteCollection) is refused with a 403 naming
// the pod, and writes nothing.
func TestPodDeleteAuthorizationOnEveryWritePath(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "web-0")
	created := f.CreateEvictionRequest(t, pod, "nodemaintenance.k8s.io")
	const user = "evr-only"
	if _, err := f.Kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"evictionrequests", "evictionrequests/status"}, Verbs: []string{"*"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clientset, err := versioned.NewForConfig(f.ImpersonatingConfig(user))
	if err != nil {
		t.Fatal(err)
	}
	client := clientset.CoordinationV1alpha1().EvictionRequests(ns)
	framework.Eventually(t, time.Minute, "the RBAC of "+user+" to reach the server", func(ctx context.Context) error {
		_, err := client.Get(ctx, created.Name, metav1.GetOptions{})
		return err
	})
	// The controller writes the request once, when it selects the parked
	// interceptor; nothing may change it after that.
	var before *v1alpha1.EvictionRequest
	framework.Eventually(t, time.Minute, "the parked interceptor selected", func(ctx context.Context) error {
		er, err := f.EvictionRequests(ns).Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if er.Status.ActiveInterceptorName == nil {
			return fmt.Errorf("no active interceptor yet")
		}
		before = er
		return nil
	})

	withLabel := func() *v1alpha1.EvictionRequest {
		er := before.DeepCopy()
		er.Labels = map[string]string{"touched": "true"}
		return er
	}
	labelPatch := []byte(`{"metadata":{"labels":{"touched":"true"}}}`)
	apply := []byte(fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1alpha1","kind":"EvictionRequest","metadata":{"name":%q,"namespace":%q,"labels":{"touched":"true"}}}`, created.Name, ns))
	for name, write := range map[string]func() error{
		"update": func() error { _, err := client.Update(ctx, withLabel(), metav1.UpdateOptions{}); return err },
		"merge patch": func() error {
			_, err := client.Patch(ctx, created.Name, types.MergePatchType, labelPatch, metav1.PatchOptions{})
			return err
		},
		"JSON patch": func() error {
			_, err := client.Patch(ctx, created.Name, types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"touched":"true"}}]`), metav1.PatchOptions{})
			return err
		},
		"strategic merge patch": func() error {
			_, err := client.Patch(ctx, created.Name, types.StrategicMergePatchType, labelPatch, metav1.PatchOptions{})
			return err
		},
		"server-side apply": func() error {
			_, err := client.Patch(ctx, created.Name, types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: user})
			return err
		},
		"status update": func() error {
			er := before.DeepCopy()
			er.Status.Message = "touched"
			_, err := client.UpdateStatus(ctx, er, metav1.UpdateOptions{})
			return err
		},
		"status patch": func() error {
			_, err := client.Patch(ctx, created.Name, types.MergePatchType, []byte(`{"status":{"message":"touched"}}`), metav1.PatchOptions{}, "status")
			return err
		},
		"status server-side apply": func() error {
			status := []byte(fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1alpha1","kind":"EvictionRequest","metadata":{"name":%q,"namespace":%q},"status":{"message":"touched"}}`, created.Name, ns))
			// Forced: the message is the controller's, which would be a
			// conflict before admission is asked.
			_, err := client.Patch(ctx, created.Name, types.ApplyPatchType, status, metav1.PatchOptions{FieldManager: user, Force: ptr.To(true)}, "status")
			return err
		},
		"delete":            func() error { return client.Delete(ctx, created.Name, metav1.DeleteOptions{}) },
		"delete collection": func() error { return client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}) },
	} {
		t.Run(name, func(t *testing.T) {
			err := write()
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot delete pod "web-0"`) {
				t.Errorf("got %v, want 403 naming the pod", err)
			}
			after, err := f.EvictionRequests(ns).Get(ctx, created.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the request is gone: %v", err)
			}
			if after.ResourceVersion != before.ResourceVersion {
				t.Errorf("the refused write changed the request: resourceVersion %s, was %s", after.ResourceVersion, before.ResourceVersion)
			}
		})
	}
}
