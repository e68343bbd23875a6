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

package requester

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
)

const ns = "shop"

var testPod = wrappers.MakePod("db-0").Namespace(ns).UID("9f1c2b7e-0000-4000-8000-000000000001").Obj()

type fixture struct {
	t    *testing.T
	ctx  context.Context
	evr  *erfake.Clientset
	kube *k8sfake.Clientset
}

func newFixture(t *testing.T, objects ...runtime.Object) *fixture {
	return &fixture{t: t, ctx: t.Context(), evr: erfake.NewClientset(objects...), kube: k8sfake.NewClientset(testPod.DeepCopy())}
}

func (f *fixture) requester(name string, opts Options) *Requester {
	f.t.Helper()
	r, err := New(name, f.evr, f.kube.CoreV1(), opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) get() *v1alpha1.EvictionRequest {
	f.t.Helper()
	er, err := f.evr.CoordinationV1alpha1().EvictionRequests(ns).Get(f.ctx, string(testPod.UID), metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return er
}

func requesterNames(er *v1alpha1.EvictionRequest) []string {
	var names []string
	for _, r := range er.Spec.Requesters {
		names = append(names, r.Name)
	}
	return names
}

// lockRequesters makes the fake answer a change of spec.requesters as the
// admission plugin does while they are locked.
func (f *fixture) lockRequesters() {
	f.evr.PrependReactor("patch", "evictionrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if _, err := f.evr.Tracker().Get(v1alpha1.Resource("evictionrequests").WithVersion("v1alpha1"), ns, action.(clienttesting.PatchAction).GetName()); err != nil {
			return false, nil, nil
		}
		return true, nil, apierrors.NewInvalid(v1alpha1.SchemeGroupVersion.WithKind("EvictionRequest").GroupKind(), string(testPod.UID), field.ErrorList{
			field.Forbidden(field.NewPath("spec", "requesters"), "may not change"),
		})
	})
}

func TestNewRefusesAnInvalidName(t *testing.T) {
	if _, err := New("Not_A_Subdomain", nil, nil, Options{}); err == nil {
		t.Error("New() accepted an invalid requester name")
	}
}

func TestRequestCreatesTheRequestOwnedByThePod(t *testing.T) {
	f := newFixture(t)
	r := f.requester("drain.example.com", Options{HeartbeatDeadlineSeconds: ptr.To[int32](900)})
	er, err := r.Request(f.ctx, testPod)
	if err != nil {
		t.Fatal(err)
	}
	if er.Name != string(testPod.UID) || er.Namespace != ns {
		t.Errorf("request %s/%s, want it named after the pod's UID", er.Namespace, er.Name)
	}
	want := v1alpha1.EvictionRequestSpec{
		Target:                   v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: "db-0", UID: string(testPod.UID)}},
		Requesters:               []v1alpha1.Requester{{Name: "drain.example.com"}},
		HeartbeatDeadlineSeconds: ptr.To[int32](900),
	}
	if diff := cmp.Diff(want, er.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "db-0", UID: testPod.UID}}
	if diff := cmp.Diff(wantOwner, er.OwnerReferences); diff != "" {
		t.Errorf("ownerReferences (-want +got):\n%s", diff)
	}
	if len(er.ManagedFields) == 0 || er.ManagedFields[0].Manager != "drain.example.com" {
		t.Errorf("managed fields %v, want the requester's own field manager", er.ManagedFields)
	}

	// Again, as after a crash: nothing changes.
	if _, err := r.Request(f.ctx, testPod); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"drain.example.com"}, requesterNames(f.get())); diff != "" {
		t.Errorf("requesters after a second Request (-want +got):\n%s", diff)
	}
}

func TestConcurrentRequestersKeepEachOther(t *testing.T) {
	f := newFixture(t)
	drain := f.requester("drain.example.com", Options{})
	descheduler := f.requester("descheduler.example.com", Options{})
	for _, r := range []*Requester{drain, descheduler} {
		if _, err := r.Request(f.ctx, testPod); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"drain.example.com", "descheduler.example.com"}, requesterNames(f.get())); diff != "" {
		t.Fatalf("requesters (-want +got):\n%s", diff)
	}
	er, err := drain.Withdraw(f.ctx, ns, testPod.UID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"descheduler.example.com"}, requesterNames(er)); diff != "" {
		t.Errorf("requesters after drain withdrew (-want +got):\n%s", diff)
	}
	// Withdrawing again changes nothing.
	if _, err := drain.Withdraw(f.ctx, ns, testPod.UID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"descheduler.example.com"}, requesterNames(f.get())); diff != "" {
		t.Errorf("requesters after withdrawing twice (-want +got):\n%s", diff)
	}
}

func TestRequestKeepsTheDeadlineOfAnExistingRequest(t *testing.T) {
	f := newFixture(t)
	if _, err := f.requester("first.example.com", Options{HeartbeatDeadlineSeconds: ptr.To[int32](600)}).Request(f.ctx, testPod); err != nil {
		t.Fatal(err)
	}
	if _, err := f.requester("second.example.com", Options{HeartbeatDeadlineSeconds: ptr.To[int32](3600)}).Request(f.ctx, testPod); err != nil {
		t.Fatalf("a second requester with another deadline: %v", err)
	}
	er := f.get()
	if *er.Spec.HeartbeatDeadlineSeconds != 600 || len(er.Spec.Requesters) != 2 {
		t.Errorf("deadline %d, requesters %v; want the first deadline and both requesters", *er.Spec.HeartbeatDeadlineSeconds, requesterNames(er))
	}
}

func TestWithdraw(t *testing.T) {
	base := func() *wrappers.EvictionRequestWrapper {
		return wrappers.MakeEvictionRequest(testPod, "other.example.com", "drain.example.com")
	}
	for _, tc := range []struct {
		name           string
		er             *v1alpha1.EvictionRequest
		wantRequesters []string
		wantForbidden  bool
	}{
		{name: "removes only its own entry", er: base().Obj(), wantRequesters: []string{"other.example.com"}},
		{name: "refuses under Forbid, naming the interceptor", er: base().Policy(v1alpha1.Forbid).Active("migrator.example.com").Obj(),
			wantRequesters: []string{"other.example.com", "drain.example.com"}, wantForbidden: true},
		{name: "leaves a complete request alone", er: base().Complete(v1alpha1.CompleteReasonPodDeleted, "gone").Obj(),
			wantRequesters: []string{"other.example.com", "drain.example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.er)
			_, err := f.requester("drain.example.com", Options{}).Withdraw(f.ctx, ns, testPod.UID)
			if IsCancellationForbidden(err) != tc.wantForbidden {
				t.Fatalf("Withdraw() = %v, want forbidden %v", err, tc.wantForbidden)
			}
			if tc.wantForbidden {
				var forbidden *CancellationForbiddenError
				if !errors.As(err, &forbidden) || forbidden.Interceptor != "migrator.example.com" {
					t.Errorf("error %#v does not name the interceptor", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantRequesters, requesterNames(f.get())); diff != "" {
				t.Errorf("requesters (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no request", func(t *testing.T) {
		f := newFixture(t)
		if er, err := f.requester("drain.example.com", Options{}).Withdraw(f.ctx, ns, testPod.UID); er != nil || err != nil {
			t.Errorf("Withdraw() without a request = %v, %v", er, err)
		}
	})
}

func TestRequestReplacesACanceledRequest(t *testing.T) {
	canceled := wrappers.MakeEvictionRequest(testPod).Complete(v1alpha1.CompleteReasonCanceled, "canceled").Obj()
	canceled.UID, canceled.ResourceVersion = "old", "1"
	f := newFixture(t, canceled)
	f.lockRequesters()
	er, err := f.requester("drain.example.com", Options{}).Request(f.ctx, testPod)
	if err != nil {
		t.Fatal(err)
	}
	if len(er.Status.Conditions) != 0 || len(er.Spec.Requesters) != 1 {
		t.Errorf("Request() = %+v, want a new request with the requester", er)
	}
	var deleted bool
	for _, a := range f.evr.Actions() {
		deleted = deleted || a.GetVerb() == "delete"
	}
	if !deleted {
		t.Error("the canceled request was not deleted")
	}
}

func TestRequestReturnsARequestItCannotJoin(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing *v1alpha1.EvictionRequest
	}{
		{"complete because the pod is gone", wrappers.MakeEvictionRequest(testPod, "other.example.com").Complete(v1alpha1.CompleteReasonPodDeleted, "gone").Obj()},
		{"cancellation forbidden", wrappers.MakeEvictionRequest(testPod, "other.example.com").Policy(v1alpha1.Forbid).Obj()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.existing)
			f.lockRequesters()
			er, err := f.requester("drain.example.com", Options{}).Request(f.ctx, testPod)
			if err != nil {
				t.Fatalf("Request() = %v, want the request as it is", err)
			}
			if diff := cmp.Diff([]string{"other.example.com"}, requesterNames(er)); diff != "" {
				t.Errorf("requesters (-want +got):\n%s", diff)
			}
			for _, a := range f.evr.Actions() {
				if a.GetVerb() == "delete" {
					t.Error("the request was deleted")
				}
			}
		})
	}
}

func TestWait(t *testing.T) {
	complete := func(reason string) *v1alpha1.EvictionRequest {
		return wrappers.MakeEvictionRequest(testPod).Complete(reason, "done").Obj()
	}
	// The request changes while Wait waits: in a synctest bubble, the
	// change comes a virtual 200ms later, after Wait started watching.
	t.Run("completes when the condition appears", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			er := complete(v1alpha1.CompleteReasonPodDeleted)
			er.Status.Conditions = nil
			f := newFixture(t, er)
			r := f.requester("drain.example.com", Options{})
			go func() {
				time.Sleep(200 * time.Millisecond)
				_, _ = f.evr.CoordinationV1alpha1().EvictionRequests(ns).UpdateStatus(f.ctx, complete(v1alpha1.CompleteReasonPodTerminated), metav1.UpdateOptions{})
			}()
			result, err := r.Wait(f.ctx, testPod)
			if err != nil {
				t.Fatal(err)
			}
			if result.Reason != v1alpha1.CompleteReasonPodTerminated || !result.Evicted() || result.Message != "done" {
				t.Errorf("Wait() = %+v", result)
			}
		})
	})
	t.Run("canceled", func(t *testing.T) {
		f := newFixture(t, complete(v1alpha1.CompleteReasonCanceled))
		result, err := f.requester("drain.example.com", Options{}).Wait(f.ctx, testPod)
		if err != nil || result.Reason != v1alpha1.CompleteReasonCanceled || result.Evicted() {
			t.Errorf("Wait() = %+v, %v", result, err)
		}
	})
	for _, tc := range []struct {
		name       string
		podDeleted bool
		wantErr    error
	}{
		{"deleted with its pod", true, nil},
		{"deleted while the pod runs", false, ErrRequestDeleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				er := complete("")
				er.Status.Conditions = nil
				f := newFixture(t, er)
				r := f.requester("drain.example.com", Options{})
				go func() {
					time.Sleep(200 * time.Millisecond)
					if tc.podDeleted {
						_ = f.kube.CoreV1().Pods(ns).Delete(f.ctx, testPod.Name, metav1.DeleteOptions{})
					}
					_ = f.evr.CoordinationV1alpha1().EvictionRequests(ns).Delete(f.ctx, er.Name, metav1.DeleteOptions{})
				}()
				result, err := r.Wait(f.ctx, testPod)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Wait() error = %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr == nil && result.Reason != v1alpha1.CompleteReasonPodDeleted {
					t.Errorf("Wait() = %+v, want PodDeleted", result)
				}
			})
		})
	}
	t.Run("no request", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.requester("drain.example.com", Options{}).Wait(f.ctx, testPod); !apierrors.IsNotFound(err) {
			t.Errorf("Wait() without a request = %v, want NotFound", err)
		}
	})
	t.Run("the request was collected with its pod before the wait", func(t *testing.T) {
		f := newFixture(t)
		if err := f.kube.CoreV1().Pods(ns).Delete(f.ctx, testPod.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		result, err := f.requester("drain.example.com", Options{}).Wait(f.ctx, testPod)
		if err != nil || result.Reason != v1alpha1.CompleteReasonPodDeleted {
			t.Errorf("Wait() = %+v, %v; want PodDeleted", result, err)
		}
	})
}

func TestKeepAfterPodLeavesOutTheOwnerReference(t *testing.T) {
	f := newFixture(t)
	er, err := f.requester("drain.example.com", Options{KeepAfterPod: true}).Request(f.ctx, testPod)
	if err != nil {
		t.Fatal(err)
	}
	if len(er.OwnerReferences) != 0 {
		t.Errorf("ownerReferences %+v, want none", er.OwnerReferences)
	}
}
