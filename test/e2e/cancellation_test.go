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
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	evictioncontroller "github.com/evictionrequest/apiserver/pkg/controller/evictionrequest"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// The actors of the KEP's cancellation examples. Pod p-1 lists actor A at
// index 0 and actor B at index 1, so B goes first. (The KEP names them
// actor-a.k8s.io and actor-b.k8s.io; names in k8s.io are reserved.)
const (
	actorA      = "actor-a.example.com"
	actorB      = "actor-b.example.com"
	nodeDrain   = "nodemaintenance.k8s.io"
	descheduler = "descheduling.avalanche.io"
)

func createP1(t *testing.T, ns string) *v1alpha1.EvictionRequest {
	t.Helper()
	pod := f.CreatePod(t, ns, "p-1", framework.PodOptions{Interceptors: []string{actorA, actorB}})
	// 1-2. The node drain controller drains node Z and requests the eviction.
	return f.CreateEvictionRequest(t, pod, nodeDrain)
}

func expectNotComplete(t *testing.T, ns, name string) {
	t.Helper()
	er, err := f.EvictionRequests(ns).Get(framework.Context(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if isComplete(er) {
		t.Fatalf("the request completed early: %s", er.Status.Message)
	}
}

func TestCancellationMultipleDynamicRequestersNoCancellation(t *testing.T) {
	t.Parallel()
	ctx := framework.Context(t)
	ns := f.NewNamespace(t)
	er := createP1(t, ns)

	// 3. The descheduler wants p-1 out too; the request exists, so it adds itself.
	if err := updateRequesters(t, ns, er.Name, nodeDrain, descheduler); err != nil {
		t.Fatal(err)
	}
	// 4-5. B is designated, answers and allows cancellation.
	waitUntilActive(t, ns, er.Name, actorB)
	respond(t, ns, er.Name, func(s *v1alpha1.EvictionRequestStatus) {
		s.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Allow)
		s.Message = "notifying the users of P"
	})
	// 7-9. The drain is canceled; the descheduler still wants the eviction.
	if err := updateRequesters(t, ns, er.Name, descheduler); err != nil {
		t.Fatal(err)
	}
	respond(t, ns, er.Name, nil)
	expectNotComplete(t, ns, er.Name)
	// 10-12. B is done; A is designated and answers.
	respond(t, ns, er.Name, func(s *v1alpha1.EvictionRequestStatus) { s.ActiveInterceptorCompleted = true })
	waitUntilActive(t, ns, er.Name, actorA)
	respond(t, ns, er.Name, func(s *v1alpha1.EvictionRequestStatus) {
		s.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Allow)
	})
	// 13-14. A deletes p-1; once it is gone the request is complete.
	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, "p-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForCompletion(t, ns, er.Name, v1alpha1.CompleteReasonPodDeleted)
	if attempts, _ := auditedEvictions(t, ns, "p-1"); attempts != 0 {
		t.Errorf("the controller evicted p-1 %d times although A deleted it", attempts)
	}
	// 15. The descheduler deletes the request.
	if err := f.EvictionRequests(ns).Delete(ctx, er.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("the descheduler cannot delete the complete request: %v", err)
	}
}

func TestCancellationSingleDynamicRequester(t *testing.T) {
	t.Parallel()
	ctx := framework.Context(t)
	ns := f.NewNamespace(t)
	er := createP1(t, ns)

	// 3-5. B is designated, answers and allows cancellation.
	waitUntilActive(t, ns, er.Name, actorB)
	respond(t, ns, er.Name, func(s *v1alpha1.EvictionRequestStatus) {
		s.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Allow)
	})
	// 6-8. The drain is canceled and the only requester withdraws: the
	// request is complete as canceled, the active interceptor cleared.
	if err := updateRequesters(t, ns, er.Name); err != nil {
		t.Fatal(err)
	}
	done := waitForCompletion(t, ns, er.Name, v1alpha1.CompleteReasonCanceled)
	waitForEvents(t, ns, er.Name, evictioncontroller.EventCanceled)
	// 9. B sees the cancellation. p-1 keeps running.
	if !strings.Contains(done.Status.Message, "canceled") {
		t.Errorf("status.message = %q", done.Status.Message)
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, "p-1", metav1.GetOptions{}); err != nil {
		t.Errorf("p-1 after the cancellation: %v", err)
	}
	if attempts, _ := auditedEvictions(t, ns, "p-1"); attempts != 0 {
		t.Errorf("p-1 was evicted %d times", attempts)
	}
}

func TestCancellationForbidden(t *testing.T) {
	t.Parallel()
	ctx := framework.Context(t)
	ns := f.NewNamespace(t)
	er := createP1(t, ns)

	// 3-4. B is designated and forbids cancellation.
	waitUntilActive(t, ns, er.Name, actorB)
	respond(t, ns, er.Name, func(s *v1alpha1.EvictionRequestStatus) {
		s.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Forbid)
	})
	// 6-7. The drain is canceled but cannot withdraw: admission refuses it,
	// and the request cannot be deleted either.
	if err := updateRequesters(t, ns, er.Name); !apierrors.IsInvalid(err) {
		t.Errorf("withdrawing under Forbid: %v, want 422", err)
	}
	if err := f.EvictionRequests(ns).Delete(ctx, er.Name, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting under Forbid: %v, want 403", err)
	}
	// 8-10. B is done; A is designated and keeps Forbid.
	respond(t, ns, er.Name, func(s *v1alpha1.EvictionRequestStatus) { s.ActiveInterceptorCompleted = true })
	active := waitUntilActive(t, ns, er.Name, actorA)
	if ptr.Deref(active.Status.EvictionRequestCancellationPolicy, "") != v1alpha1.Forbid {
		t.Errorf("the controller reset the cancellation policy to %v on the hand-off", active.Status.EvictionRequestCancellationPolicy)
	}
	respond(t, ns, er.Name, func(s *v1alpha1.EvictionRequestStatus) {
		s.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Forbid)
	})
	// 11-12. A deletes p-1; the request completes.
	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, "p-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForCompletion(t, ns, er.Name, v1alpha1.CompleteReasonPodDeleted)
	// 13. The drain controller can delete the request now that p-1 is gone.
	if err := f.EvictionRequests(ns).Delete(ctx, er.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting under Forbid once p-1 is gone: %v", err)
	}
}
