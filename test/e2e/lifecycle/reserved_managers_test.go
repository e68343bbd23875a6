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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	"k8s.io/client-go/kubernetes"
	lifecyclev1alpha1client "k8s.io/client-go/kubernetes/typed/lifecycle/v1alpha1"
	"k8s.io/client-go/util/retry"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/stepaside"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// reserved is what kube-apiserver says when the reservation policy refuses
// a write under one of kube-controller-manager's field managers.
const reserved = "is reserved for kube-controller-manager"

// A field manager's name is whatever a writer says it is. A namespace
// editor (Kubernetes' built-in edit role, which writes lifecycle.k8s.io
// EvictionRequests) and a user who may only patch EvictionRequests in one
// namespace write under each of kube-controller-manager's two field
// managers, by every verb they hold (create, server-side apply, update,
// patch, and the status they may not write): kube-apiserver refuses each,
// naming the reserved name, and writes under their own names still pass.
// Nothing changes for evictionrequest-controller's own controllers: neither
// steps aside (the metric, no record), and a request in another namespace
// is evicted by them.
func TestForgedFieldManagersChangeNothing(t *testing.T) {
	ns := f.NewNamespace(t)
	target := f.CreatePod(t, ns, "db-0", framework.PodOptions{})
	const editor, patcher = "e2e-namespace-editor", "e2e-patcher"
	f.BindClusterRole(t, ns, editor, "edit")
	f.GrantRole(t, ns, patcher, "patch-evictionrequests", rbacv1.PolicyRule{
		APIGroups: []string{lifecyclev1alpha1.GroupName}, Resources: []string{"evictionrequests"}, Verbs: []string{"patch"}})
	asEditor, asPatcher := lifecycleClient(t, editor), lifecycleClient(t, patcher)

	// The editor's own request, under its own name, is what the other
	// verbs write to.
	var own *lifecyclev1alpha1.EvictionRequest
	framework.Eventually(t, time.Minute, editor+" to create a request under its own field manager", func(ctx context.Context) (err error) {
		own, err = asEditor.EvictionRequests(ns).Create(ctx, forgedRequest(ns, target, "e2e.example.com/editor"), metav1.CreateOptions{FieldManager: "e2e-editor"})
		return err
	})
	for _, manager := range stepaside.Counterparts {
		for _, w := range forgedWrites(ns, target, own.Name, string(manager)) {
			t.Run(w.who+" "+w.verb+" as "+string(manager), func(t *testing.T) {
				client := map[string]lifecyclev1alpha1client.LifecycleV1alpha1Interface{editor: asEditor, patcher: asPatcher}[w.who]
				err := w.write(t.Context(), client)
				switch {
				case w.rbac && apierrors.IsForbidden(err):
					// RBAC refuses it before the policy is asked.
				case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), reserved) || !strings.Contains(err.Error(), string(manager)):
					t.Errorf("%v, want kube-apiserver's 403 saying that %s %s", err, manager, reserved)
				}
			})
		}
	}
	framework.Eventually(t, time.Minute, patcher+" to patch under its own field manager", func(ctx context.Context) error {
		_, err := asPatcher.EvictionRequests(ns).Patch(ctx, own.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`),
			metav1.PatchOptions{FieldManager: "e2e-patcher"})
		return err
	})

	if framework.UpstreamControllers() {
		// Ours run the actors only: there is nothing of theirs to stop.
		return
	}
	samples := framework.ScrapeProcessMetrics(t, f.LifecycleController())
	for _, c := range stepaside.Counterparts {
		if v := samples.Sample(t, fmt.Sprintf(`evictionrequest_lifecycle_controller_stepped_aside{controller="%s"}`, c)); v != 0 {
			t.Errorf("%s stepped aside after the forged writes", c)
		}
	}
	if _, err := f.Kube.CoreV1().ConfigMaps(artifacts.Namespace).Get(t.Context(), stepaside.RecordName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the step-aside record: %v, want none", err)
	}
	other := f.NewNamespace(t)
	pod := f.CreatePod(t, other, "web-0", framework.PodOptions{})
	framework.RequestEviction(t, keptRequester(t), pod)
	evicted(t, pod)
	evictedOnce(t, pod)
}

// lifecycleClient is the lifecycle.k8s.io client of user.
func lifecycleClient(t *testing.T, user string) lifecyclev1alpha1client.LifecycleV1alpha1Interface {
	t.Helper()
	client, err := kubernetes.NewForConfig(f.ImpersonatingConfig(user, "system:authenticated"))
	if err != nil {
		t.Fatal(err)
	}
	return client.LifecycleV1alpha1()
}

// forgedRequest is an EvictionRequest of requester for pod.
func forgedRequest(ns string, pod *corev1.Pod, requester string) *lifecyclev1alpha1.EvictionRequest {
	return &lifecyclev1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "forged-"},
		Spec: lifecyclev1alpha1.EvictionRequestSpec{
			Target:    lifecyclev1alpha1.EvictionRequestTarget{Pod: &lifecyclev1alpha1.EvictionRequestPodReference{Name: pod.Name, UID: pod.UID}},
			Requester: requester,
			Intent:    lifecyclev1alpha1.EvictionRequestIntentEviction,
		},
	}
}

// forgedWrite is one write under another's field manager.
type forgedWrite struct {
	who, verb string
	// rbac is true when the writer's role does not allow the write at all.
	rbac  bool
	write func(ctx context.Context, client lifecyclev1alpha1client.LifecycleV1alpha1Interface) error
}

// forgedWrites are the writes under manager that the namespace editor and
// the patcher can attempt on requests of pod in ns: a new one, and the
// editor's request named own.
func forgedWrites(ns string, pod *corev1.Pod, own, manager string) []forgedWrite {
	name := "forged-" + strings.ReplaceAll(manager, "-", "")[:12]
	labels := []byte(`{"metadata":{"labels":{"forged":"yes"}}}`)
	requests := func(c lifecyclev1alpha1client.LifecycleV1alpha1Interface) lifecyclev1alpha1client.EvictionRequestInterface {
		return c.EvictionRequests(ns)
	}
	// latest is the editor's request, as last written.
	latest := func(ctx context.Context, c lifecyclev1alpha1client.LifecycleV1alpha1Interface) (*lifecyclev1alpha1.EvictionRequest, error) {
		return requests(c).Get(ctx, own, metav1.GetOptions{})
	}
	apply := lifecycleapply.EvictionRequest(name, ns).WithSpec(lifecycleapply.EvictionRequestSpec().
		WithTarget(lifecycleapply.EvictionRequestTarget().WithPod(lifecycleapply.EvictionRequestPodReference().WithName(pod.Name).WithUID(pod.UID))).
		WithRequester("e2e.example.com/forger").WithIntent(lifecyclev1alpha1.EvictionRequestIntentEviction))
	return []forgedWrite{
		{who: "e2e-namespace-editor", verb: "create", write: func(ctx context.Context, c lifecyclev1alpha1client.LifecycleV1alpha1Interface) error {
			_, err := requests(c).Create(ctx, forgedRequest(ns, pod, "e2e.example.com/forger"), metav1.CreateOptions{FieldManager: manager})
			return err
		}},
		{who: "e2e-namespace-editor", verb: "apply", write: func(ctx context.Context, c lifecyclev1alpha1client.LifecycleV1alpha1Interface) error {
			_, err := requests(c).Apply(ctx, apply, metav1.ApplyOptions{FieldManager: manager, Force: true})
			return err
		}},
		{who: "e2e-namespace-editor", verb: "update", write: func(ctx context.Context, c lifecyclev1alpha1client.LifecycleV1alpha1Interface) error {
			// The controllers write the request too: an update of a
			// version they replaced meanwhile is refused with a conflict
			// before admission sees it, and is made again on the latest.
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				er, err := latest(ctx, c)
				if err != nil {
					return err
				}
				er.Labels = map[string]string{"forged": "yes"}
				_, err = requests(c).Update(ctx, er, metav1.UpdateOptions{FieldManager: manager})
				return err
			})
		}},
		{who: "e2e-namespace-editor", verb: "patch", write: func(ctx context.Context, c lifecyclev1alpha1client.LifecycleV1alpha1Interface) error {
			_, err := requests(c).Patch(ctx, own, types.MergePatchType, labels, metav1.PatchOptions{FieldManager: manager})
			return err
		}},
		{who: "e2e-namespace-editor", verb: "status apply", rbac: true, write: func(ctx context.Context, c lifecyclev1alpha1client.LifecycleV1alpha1Interface) error {
			er, err := latest(ctx, c)
			if err != nil {
				return err
			}
			status := lifecycleapply.EvictionRequest(er.Name, ns).WithStatus(lifecycleapply.EvictionRequestStatus().WithObservedGeneration(er.Generation))
			_, err = requests(c).ApplyStatus(ctx, status, metav1.ApplyOptions{FieldManager: manager, Force: true})
			return err
		}},
		{who: "e2e-patcher", verb: "patch", write: func(ctx context.Context, c lifecyclev1alpha1client.LifecycleV1alpha1Interface) error {
			_, err := requests(c).Patch(ctx, own, types.MergePatchType, labels, metav1.PatchOptions{FieldManager: manager})
			return err
		}},
		{who: "e2e-patcher", verb: "apply", write: func(ctx context.Context, c lifecyclev1alpha1client.LifecycleV1alpha1Interface) error {
			patch := lifecycleapply.EvictionRequest(own, ns).WithLabels(map[string]string{"forged": "yes"})
			_, err := requests(c).Apply(ctx, patch, metav1.ApplyOptions{FieldManager: manager, Force: true})
			return err
		}},
	}
}
