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
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

func config(identity string) Config {
	// A Lease that only expires after a minute: anyone who gets it sooner
	// got it because its holder gave it up.
	return Config{Namespace: "kube-system", Name: "test", Identity: identity,
		LeaseDuration: time.Minute, RenewDeadline: 30 * time.Second, RetryPeriod: 50 * time.Millisecond}
}

func TestATermThatEndsGivesTheLeaseUp(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := k8sfake.NewClientset()

	aLed := make(chan struct{})
	aDone := make(chan struct{})
	go func() {
		defer close(aDone)
		// A's term fails at once, as a controller that cannot start would.
		_ = Run(ctx, client.CoordinationV1(), config("a"), func(context.Context) {
			select {
			case <-aLed:
			default:
				close(aLed)
			}
		})
	}()
	<-aLed

	bLeads := make(chan struct{})
	bDone := make(chan struct{})
	go func() {
		defer close(bDone)
		_ = Run(ctx, client.CoordinationV1(), config("b"), func(termCtx context.Context) {
			close(bLeads)
			<-termCtx.Done()
		})
	}()
	select {
	case <-bLeads:
	case <-time.After(10 * time.Second):
		t.Fatal("b never led: a kept renewing the Lease after its term ended")
	}
	cancel()
	<-aDone
	<-bDone
}

func TestRunReturnsOnlyAfterTheTermEndedAndTheLeaseWasGivenUp(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	client := k8sfake.NewClientset()
	var running atomic.Int32
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Run(ctx, client.CoordinationV1(), config("a"), func(termCtx context.Context) {
			running.Add(1)
			close(started)
			<-termCtx.Done()
			// A term that takes its time to stop.
			time.Sleep(200 * time.Millisecond)
			running.Add(-1)
		})
	}()
	<-started
	cancel()
	<-done
	if n := running.Load(); n != 0 {
		t.Errorf("Run returned while %d terms still ran", n)
	}
	// The next leader need not wait for the Lease to expire.
	lease, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder != "" {
		t.Errorf("Run returned with the Lease still held by %q", holder)
	}
}

func TestHealthzReportsALeaderThatCannotRenew(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	client := k8sfake.NewClientset()
	// Once stuck, every Lease update hangs, as a call to an unresponsive
	// kube-apiserver without a timeout would; the elector still believes
	// it leads.
	var stuck atomic.Bool
	unblock := make(chan struct{})
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if stuck.Load() {
			<-unblock
		}
		return false, nil, nil
	})
	health := leaderelection.NewLeaderHealthzAdaptor(0)
	cfg := Config{Namespace: "kube-system", Name: "test", Identity: "a",
		LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond, Healthz: health}

	leading := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Run(ctx, client.CoordinationV1(), cfg, func(termCtx context.Context) {
			close(leading)
			<-termCtx.Done()
		})
	}()
	defer func() {
		cancel()
		close(unblock)
		<-done
	}()
	<-leading
	if err := health.Check(nil); err != nil {
		t.Fatalf("a leader that renews is reported unhealthy: %v", err)
	}

	stuck.Store(true)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return health.Check(nil) != nil, nil
	})
	if err != nil {
		t.Errorf("a leader that has not renewed for longer than the lease duration is still reported healthy")
	}
}
