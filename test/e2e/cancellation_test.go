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
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// The KEP's three cancellation examples, played by SDK actors. Pod p-1 lists
// actor A at index 0 and actor B at index 1, so B goes first. (The KEP names
// them actor-a.k8s.io and actor-b.k8s.io; names in k8s.io are reserved.)
const (
	actorA      = "actor-a.example.com"
	actorB      = "actor-b.example.com"
	nodeDrain   = "nodemaintenance.k8s.io"
	descheduler = "descheduling.avalanche.io"
)

// cancellationExample is the cast of one example: p-1, the node drain
// requester that asked for its eviction, and what the actors' handlers saw.
type cancellationExample struct {
	pod       string
	name      string
	nodeDrain *requester.Requester
	// bStarted delivers the context of B's handler; bDone lets it finish.
	bStarted chan context.Context
	bDone    chan struct{}
	// aSaw delivers the request as A found it.
	aSaw chan *v1alpha1.EvictionRequest
}

// startCancellationExample creates p-1 and its actors: B reports with the
// cancellation policy bPolicy, works until told, then completes; A ensures
// aPolicy and deletes p-1 (steps 1-2 of every example: the node drain
// requests the eviction).
func startCancellationExample(t *testing.T, ns string, bPolicy, aPolicy v1alpha1.EvictionRequestCancellationPolicy) *cancellationExample {
	t.Helper()
	ctx := t.Context()
	e := &cancellationExample{
		pod: "p-1", nodeDrain: newRequester(t, nodeDrain),
		bStarted: make(chan context.Context, 1), bDone: make(chan struct{}), aSaw: make(chan *v1alpha1.EvictionRequest, 1),
	}
	f.StartInterceptor(t, ns, actorB, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		if err := req.Report(ctx, interceptor.Progress{Message: "notifying the users of P", CancellationPolicy: bPolicy}); err != nil {
			return interceptor.Result{}, err
		}
		e.bStarted <- ctx
		select {
		case <-e.bDone:
			return interceptor.Complete("the users of P are done"), nil
		case <-ctx.Done():
			return interceptor.Result{}, ctx.Err()
		}
	})
	f.StartInterceptor(t, ns, actorA, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		e.aSaw <- req.EvictionRequest
		if err := req.Report(ctx, interceptor.Progress{Message: "deleting p-1", CancellationPolicy: aPolicy}); err != nil {
			return interceptor.Result{}, err
		}
		if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, req.Pod().Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: ptr.To(req.PodUID())},
		}); err != nil && !apierrors.IsNotFound(err) {
			return interceptor.Result{}, err
		}
		return interceptor.Terminated("deleted p-1"), nil
	})
	pod := f.CreatePod(t, ns, e.pod, framework.PodOptions{Interceptors: []string{actorA, actorB}})
	er, err := e.nodeDrain.Request(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	e.name = er.Name
	return e
}

// bWorks waits until B works on p-1 (steps 3-5) and returns its context.
func (e *cancellationExample) bWorks(t *testing.T) context.Context {
	t.Helper()
	select {
	case ctx := <-e.bStarted:
		return ctx
	case <-time.After(framework.DefaultTimeout):
		t.Fatal("actor B never worked on p-1")
		return nil
	}
}

func (e *cancellationExample) aFound(t *testing.T) *v1alpha1.EvictionRequest {
	t.Helper()
	select {
	case er := <-e.aSaw:
		return er
	case <-time.After(framework.DefaultTimeout):
		t.Fatal("actor A never took p-1")
		return nil
	}
}

func expectNotComplete(t *testing.T, ns, name string) {
	t.Helper()
	er, err := f.EvictionRequests(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if coordinationutil.IsComplete(er) {
		t.Fatalf("the request completed early: %s", er.Status.Message)
	}
}

func TestCancellationMultipleDynamicRequestersNoCancellation(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	e := startCancellationExample(t, ns, v1alpha1.Allow, v1alpha1.Allow)

	// 3. The descheduler wants p-1 out too; the request exists, so it adds itself.
	pod, err := f.Kube.CoreV1().Pods(ns).Get(ctx, e.pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deschedulerRequester := newRequester(t, descheduler)
	if _, err := deschedulerRequester.Request(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// 4-6. B is designated, allows cancellation and notifies the users.
	e.bWorks(t)
	// 7-9. The drain is canceled; the descheduler still wants the eviction.
	er, err := e.nodeDrain.Withdraw(ctx, ns, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	if len(er.Spec.Requesters) != 1 || er.Spec.Requesters[0].Name != descheduler {
		t.Errorf("requesters after the drain withdrew: %v", er.Spec.Requesters)
	}
	time.Sleep(2 * framework.HeartbeatPeriod)
	expectNotComplete(t, ns, e.name)
	// 10-14. B is done; A is designated, deletes p-1; the request is complete.
	close(e.bDone)
	e.aFound(t)
	result, err := deschedulerRequester.Wait(ctx, pod)
	if err != nil || result.Reason != v1alpha1.CompleteReasonPodDeleted {
		t.Fatalf("the descheduler saw the request end with %+v, %v; want PodDeleted", result, err)
	}
	if attempts, _ := f.AuditedEvictions(t, ns, e.pod); attempts != 0 {
		t.Errorf("the controller evicted p-1 %d times although A deleted it", attempts)
	}
	// 15. The descheduler deletes the request.
	if err := f.EvictionRequests(ns).Delete(ctx, e.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("the descheduler cannot delete the complete request: %v", err)
	}
}

func TestCancellationSingleDynamicRequester(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	e := startCancellationExample(t, ns, v1alpha1.Allow, v1alpha1.Allow)

	// 3-5. B is designated, allows cancellation and notifies the users.
	bCtx := e.bWorks(t)
	// 6-8. The drain is canceled and the only requester withdraws: the
	// request is complete as canceled, the active interceptor cleared.
	pod, err := f.Kube.CoreV1().Pods(ns).Get(ctx, e.pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.nodeDrain.Withdraw(ctx, ns, pod.UID); err != nil {
		t.Fatal(err)
	}
	result, err := e.nodeDrain.Wait(ctx, pod)
	if err != nil || result.Reason != v1alpha1.CompleteReasonCanceled || result.Evicted() {
		t.Fatalf("Wait() = %+v, %v; want Canceled", result, err)
	}
	f.WaitForCompletion(t, ns, e.name, v1alpha1.CompleteReasonCanceled)
	// 9. B learns of the cancellation: its handler's context ends.
	select {
	case <-bCtx.Done():
	case <-time.After(30 * time.Second):
		t.Error("actor B was not told of the cancellation")
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, e.pod, metav1.GetOptions{}); err != nil {
		t.Errorf("p-1 after the cancellation: %v", err)
	}
	if attempts, _ := f.AuditedEvictions(t, ns, e.pod); attempts != 0 {
		t.Errorf("p-1 was evicted %d times", attempts)
	}
}

func TestCancellationForbidden(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	e := startCancellationExample(t, ns, v1alpha1.Forbid, v1alpha1.Forbid)

	// 3-5. B is designated and forbids cancellation.
	e.bWorks(t)
	// 6-7. The drain is canceled but cannot withdraw, and the request
	// cannot be deleted either.
	pod, err := f.Kube.CoreV1().Pods(ns).Get(ctx, e.pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.nodeDrain.Withdraw(ctx, ns, pod.UID); !requester.IsCancellationForbidden(err) {
		t.Errorf("withdrawing under Forbid: %v, want a CancellationForbiddenError", err)
	}
	if err := f.EvictionRequests(ns).Delete(ctx, e.name, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting under Forbid: %v, want 403", err)
	}
	// 8-10. B is done; A is designated and finds Forbid kept.
	close(e.bDone)
	if found := e.aFound(t); ptr.Deref(found.Status.EvictionRequestCancellationPolicy, "") != v1alpha1.Forbid {
		t.Errorf("the controller reset the cancellation policy to %v on the hand-off", found.Status.EvictionRequestCancellationPolicy)
	}
	// 11-12. A deletes p-1; the request completes.
	f.WaitForCompletion(t, ns, e.name, v1alpha1.CompleteReasonPodDeleted)
	// 13. The drain controller can delete the request now that p-1 is gone.
	if err := f.EvictionRequests(ns).Delete(ctx, e.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting under Forbid once p-1 is gone: %v", err)
	}
}
