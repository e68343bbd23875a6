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
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	coordinationclient "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/typed/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// completeIn2020 is the status patch of the security review: Complete=True
// with a transition time in 2020, which made the TTL controller delete the
// request at once while its pod kept running.
var completeIn2020 = []byte(`{"status":{"activeInterceptorName":null,"conditions":[{"type":"Complete","status":"True","reason":"PodDeleted",` +
	`"message":"written by a status writer","lastTransitionTime":"2020-01-01T00:00:00Z"}]}}`)

// statusWriter returns the client of user, once its RBAC reaches the server.
func statusWriter(t *testing.T, ns, user, name string) coordinationclient.EvictionRequestInterface {
	t.Helper()
	clientset, err := versioned.NewForConfig(f.ImpersonatingConfig(user))
	if err != nil {
		t.Fatal(err)
	}
	client := clientset.CoordinationV1alpha1().EvictionRequests(ns)
	framework.Eventually(t, time.Minute, "the RBAC of "+user+" to reach the server", func(ctx context.Context) error {
		_, err := client.Get(ctx, name, metav1.GetOptions{})
		return err
	})
	return client
}

// selected waits until the controller selected the parked interceptor of
// the request ns/name, its last write while the test runs, and returns it.
func selected(t *testing.T, ns, name string) *v1alpha1.EvictionRequest {
	t.Helper()
	return f.WaitForRequest(t, ns, name, "the parked interceptor selected", func(er *v1alpha1.EvictionRequest) error {
		if coordinationutil.ActiveInterceptor(er) != parkedInterceptor {
			return fmt.Errorf("active interceptor %q", coordinationutil.ActiveInterceptor(er))
		}
		return nil
	})
}

// unchanged fails the test when the request ns/name changed since before.
func unchanged(t *testing.T, ns string, before *v1alpha1.EvictionRequest) {
	t.Helper()
	after, err := f.EvictionRequests(ns).Get(t.Context(), before.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the request is gone: %v", err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the refused write changed the request: resourceVersion %s, was %s", after.ResourceVersion, before.ResourceVersion)
	}
}

// TestStatusWritesRestOnTheWritersRights plays the security review's
// status writes on the real control plane. A writer of
// evictionrequests/status that may not delete the pod (what the shipped
// evictionrequest-interceptor role held before it held delete pods) is
// refused with a 403 naming the pod; an interceptor bound to the shipped
// role writes its heartbeat and message, but its Complete dated 2020 is
// refused with a 403 naming the field, and the request outlives the TTL
// controller's chance to delete it: a request completed by a writer with
// the controller's right (evictionrequests/controller, as a controller run
// outside the server would hold it) at the same moment, dated 2020 too,
// lives out the whole TTL from when the server saw it complete, and the
// refused one is still there after it went.
func TestStatusWritesRestOnTheWritersRights(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	attacked := f.CreateEvictionRequest(t, parkedPod(t, ns, "web-0"), "nodemaintenance.k8s.io")
	sentinel := f.CreateEvictionRequest(t, parkedPod(t, ns, "db-0"), "nodemaintenance.k8s.io")
	evictionRequests := []string{"evictionrequests"}
	coordinationGroup := []string{v1alpha1.GroupName}
	read := rbacv1.PolicyRule{APIGroups: coordinationGroup, Resources: evictionRequests, Verbs: []string{"get", "list", "watch"}}
	writeStatus := rbacv1.PolicyRule{APIGroups: coordinationGroup, Resources: []string{"evictionrequests/status"}, Verbs: []string{"get", "update", "patch"}}
	grantRole(t, ns, "status-writer", "status-writer", read, writeStatus)
	f.BindClusterRole(t, ns, "db-operator", "evictionrequest-interceptor")
	grantRole(t, ns, "outside-controller", "outside-controller", read, writeStatus,
		rbacv1.PolicyRule{APIGroups: coordinationGroup, Resources: []string{"evictionrequests/controller"}, Verbs: []string{"update"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}})
	statusOnly := statusWriter(t, ns, "status-writer", attacked.Name)
	interceptor := statusWriter(t, ns, "db-operator", attacked.Name)
	controller := statusWriter(t, ns, "outside-controller", sentinel.Name)
	before := selected(t, ns, attacked.Name)
	selected(t, ns, sentinel.Name)

	t.Run("without the right to delete the pod", func(t *testing.T) {
		_, err := statusOnly.Patch(t.Context(), attacked.Name, types.MergePatchType, completeIn2020, metav1.PatchOptions{}, "status")
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot delete pod "web-0"`) || !strings.Contains(err.Error(), `verb "delete" on resource "pods"`) {
			t.Errorf("a status patch by a writer who may not delete the pod: %v, want a 403 naming the pod and the rule", err)
		}
		unchanged(t, ns, before)
	})
	t.Run("an interceptor's own fields", func(t *testing.T) {
		heartbeat := fmt.Sprintf(`{"status":{"heartbeatTime":%q,"message":"migrating"}}`, time.Now().UTC().Format(time.RFC3339))
		written, err := interceptor.Patch(t.Context(), attacked.Name, types.MergePatchType, []byte(heartbeat), metav1.PatchOptions{}, "status")
		if err != nil {
			t.Fatalf("a heartbeat of an interceptor bound to evictionrequest-interceptor: %v", err)
		}
		before = written
	})
	t.Run("the controller's fields", func(t *testing.T) {
		_, err := interceptor.Patch(t.Context(), attacked.Name, types.MergePatchType, completeIn2020, metav1.PatchOptions{}, "status")
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "status.conditions[Complete]") ||
			!strings.Contains(err.Error(), `"evictionrequests/controller"`) {
			t.Errorf("an interceptor's Complete dated 2020: %v, want a 403 naming status.conditions[Complete] and the rule", err)
		}
		unchanged(t, ns, before)
	})

	// What the TTL controller would have done with an accepted Complete:
	// the sentinel is completed alike, by a writer with the controller's
	// right, and is deleted a whole TTL after the server saw it complete.
	completedAt := time.Now()
	done, err := controller.Patch(t.Context(), sentinel.Name, types.MergePatchType, completeIn2020, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("a Complete by a writer with the controller's right: %v", err)
	}
	stamped := coordinationutil.GetCompleteCondition(done).LastTransitionTime.Time
	if stamped.Before(completedAt.Add(-5 * time.Second)) {
		t.Errorf("the Complete condition is dated %s, the writer's time; want the server's", stamped.UTC())
	}
	framework.Eventually(t, completedTTL+time.Minute, "the TTL controller to delete the completed sentinel", func(ctx context.Context) error {
		_, err := f.EvictionRequests(ns).Get(ctx, sentinel.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, errors.New("still there"))
	})
	// The stamp has a second's resolution: the TTL may end up to a second
	// before the write's TTL.
	if lived := time.Since(completedAt); lived < completedTTL-5*time.Second {
		t.Errorf("the sentinel was deleted %s after its completion, want its whole TTL of %s", lived.Round(time.Second), completedTTL)
	}
	er, err := f.EvictionRequests(ns).Get(t.Context(), attacked.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the request whose Complete was refused is gone after the TTL controller's chance: %v", err)
	}
	if coordinationutil.IsComplete(er) {
		t.Errorf("the request whose Complete was refused is complete: %+v", er.Status)
	}
}
