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

package leaderelect

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

// A fenced term's writes are not sent; its reads, and every request of no
// term, are.
func TestFenceWritesRefusesOnlyAFencedTermsWrites(t *testing.T) {
	var sent atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { sent.Add(1) }))
	defer server.Close()
	client := &http.Client{Transport: FenceWrites(http.DefaultTransport)}
	fenced := withFence(t.Context(), func() error { return errors.New("stale") })
	open := withFence(t.Context(), func() error { return nil })
	for _, tc := range []struct {
		ctx    context.Context
		method string
		sent   bool
	}{
		{t.Context(), http.MethodPost, true},
		{open, http.MethodPatch, true},
		{fenced, http.MethodGet, true},
		{fenced, http.MethodPost, false},
		{fenced, http.MethodPut, false},
		{fenced, http.MethodPatch, false},
		{fenced, http.MethodDelete, false},
	} {
		before := sent.Load()
		req, err := http.NewRequestWithContext(tc.ctx, tc.method, server.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		if got := sent.Load() > before; got != tc.sent || (err != nil) == tc.sent {
			t.Errorf("%s with fence %v: sent %t (error %v), want sent %t", tc.method, Fence(tc.ctx), got, err, tc.sent)
		}
	}
}

// A leader whose renewals stop without the elector noticing, as in a
// process frozen past its Lease, has its term fenced once the renew
// deadline passes, while its context has not ended.
func TestATermIsFencedPastTheRenewDeadline(t *testing.T) {
	client := k8sfake.NewClientset()
	// Once stuck, every Lease update hangs: the elector still believes it
	// leads, as a frozen one does when it resumes.
	var stuck atomic.Bool
	unblock := make(chan struct{})
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if stuck.Load() {
			<-unblock
		}
		return false, nil, nil
	})
	cfg := Config{Namespace: "kube-system", Name: "test", Identity: "a",
		LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
	term := firstTerm(t, client, cfg)
	t.Cleanup(func() { close(unblock) })
	if err := Fence(term); err != nil {
		t.Fatalf("a leader that renews is fenced: %v", err)
	}
	stuck.Store(true)
	waitFenced(t, term, "a leader that has not renewed for longer than the renew deadline")
}

// A leader that finds another replica holding its Lease (a process frozen
// past its Lease resumes and reads it) is fenced at once, though its
// elector keeps the term running until the renew deadline passes.
func TestATermIsFencedOnceAnotherReplicaHoldsTheLease(t *testing.T) {
	client := k8sfake.NewClientset()
	var stolen atomic.Bool
	renewals := make(chan struct{}, 100)
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if stolen.Load() {
			return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), "test", errors.New("held by b"))
		}
		select {
		case renewals <- struct{}{}:
		default:
		}
		return false, nil, nil
	})
	client.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !stolen.Load() {
			return false, nil, nil
		}
		now := metav1.NewMicroTime(time.Now())
		return true, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "test", ResourceVersion: "99"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("b"), LeaseDurationSeconds: ptr.To[int32](60),
				AcquireTime: &now, RenewTime: &now},
		}, nil
	})
	// A renew deadline long enough that the term outlives the test's
	// checks once the Lease is lost.
	cfg := Config{Namespace: "kube-system", Name: "test", Identity: "a",
		LeaseDuration: 60 * time.Second, RenewDeadline: 50 * time.Second, RetryPeriod: 100 * time.Millisecond}
	term := firstTerm(t, client, cfg)
	// Through several renewals, a leader that renews is never fenced.
	for range 3 {
		select {
		case <-renewals:
		case <-time.After(30 * time.Second):
			t.Fatal("the leader does not renew")
		}
		if err := Fence(term); err != nil {
			t.Fatalf("a leader that renews is fenced: %v", err)
		}
	}
	stolen.Store(true)
	waitFenced(t, term, "a leader that read another replica's hold on its Lease")
}

// firstTerm runs Run with client and cfg until the test ends, and returns
// the context of its first term.
func firstTerm(t *testing.T, client *k8sfake.Clientset, cfg Config) context.Context {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	terms := make(chan context.Context, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Run(ctx, client.CoordinationV1(), cfg, func(termCtx context.Context) {
			terms <- termCtx
			<-termCtx.Done()
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case term := <-terms:
		return term
	case <-time.After(30 * time.Second):
		t.Fatal("no term began")
		return nil
	}
}

// waitFenced waits for term to be fenced while it runs: its context has
// not ended, so the fence alone stops its writes.
func waitFenced(t *testing.T, term context.Context, who string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return Fence(term) != nil, nil
	})
	if err != nil {
		t.Fatalf("%s is not fenced", who)
	}
	if term.Err() != nil {
		t.Errorf("the term ended (%v): the fence is what stops its writes here", term.Err())
	}
}
