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

package interceptor

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const (
	me     = "migrator.example.com"
	other  = "fallback.example.com"
	period = time.Minute
)

// activeRequest is the request of pod db-0 whose active interceptor is active.
func activeRequest(active string) *wrappers.EvictionRequestWrapper {
	return wrappers.MakeEvictionRequest(wrappers.MakePod("db-0").Obj(), "drain.example.com").Interceptors(other, me).Active(active)
}

// fixture runs an interceptor on fake clientsets and a fake clock in the
// test's synctest bubble: the fake clock is the interceptor's (its
// heartbeats, requeues and backoff), the bubble's time drives the client
// machinery (informers syncing), and settle lets every goroutine act before
// the test looks at what the interceptor did; nothing waits in real time.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	start time.Time
	clock *testingclock.FakeClock
	evr   *erfake.Clientset
	er    *v1alpha1.EvictionRequest

	// runs receives the Request of every run of the handler.
	runs chan *Request
	mu   sync.Mutex
	// handle is what the handler does.
	handle Handler
}

// newFixture starts an interceptor that holds er, inside a synctest bubble.
func newFixture(t *testing.T, er *v1alpha1.EvictionRequest, handle Handler) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	f := &fixture{t: t, ctx: ctx, start: start, clock: testingclock.NewFakeClock(start), evr: erfake.NewClientset(er), er: er, runs: make(chan *Request, 10), handle: handle}
	i, err := New(Config{
		Name: me,
		Handler: func(ctx context.Context, req *Request) (Result, error) {
			f.runs <- req
			f.mu.Lock()
			handle := f.handle
			f.mu.Unlock()
			return handle(ctx, req)
		},
		Client:          f.evr,
		API:             evictionapi.Coordination,
		KubeClient:      k8sfake.NewClientset(),
		HeartbeatPeriod: period,
		Clock:           f.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, ctx, cancel, i)
	return f
}

// settle lets the client machinery's timers fire (an informer checks that
// it synced every 100ms) and waits until every goroutine of the bubble is
// blocked: whatever the interceptor does next needs the fake clock to move.
func settle() {
	time.Sleep(time.Second)
	synctest.Wait()
}

// started returns the Request of the handler's next run, which must have
// started once the bubble settled.
func (f *fixture) started() *Request {
	f.t.Helper()
	settle()
	select {
	case req := <-f.runs:
		return req
	default:
		f.t.Fatal("the handler did not start")
		return nil
	}
}

// notStarted checks that the handler did not run again.
func (f *fixture) notStarted() {
	f.t.Helper()
	settle()
	select {
	case <-f.runs:
		f.t.Fatal("the handler started")
	default:
	}
}

// startedAfter moves the clock on by d and checks that the handler ran again.
func (f *fixture) startedAfter(d time.Duration) *Request {
	f.t.Helper()
	f.clock.Step(d)
	return f.started()
}

func (f *fixture) get() *v1alpha1.EvictionRequest {
	f.t.Helper()
	settle()
	er, err := f.evr.CoordinationV1alpha1().EvictionRequests(f.er.Namespace).Get(f.ctx, f.er.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return er
}

// heartbeat checks that the last heartbeat is stamped at.
func (f *fixture) heartbeat(at time.Time) *v1alpha1.EvictionRequest {
	f.t.Helper()
	er := f.get()
	if er.Status.HeartbeatTime == nil || !er.Status.HeartbeatTime.Time.Equal(at) {
		f.t.Fatalf("heartbeat %v, want %s", er.Status.HeartbeatTime, at)
	}
	return er
}

// nextHeartbeat moves the clock on by a period and checks that the
// interceptor heartbeat then.
func (f *fixture) nextHeartbeat() *v1alpha1.EvictionRequest {
	f.t.Helper()
	f.clock.Step(period)
	return f.heartbeat(f.clock.Now())
}

func (f *fixture) setStatus(mutate func(*v1alpha1.EvictionRequestStatus)) {
	f.t.Helper()
	er := f.get()
	mutate(&er.Status)
	if _, err := f.evr.CoordinationV1alpha1().EvictionRequests(er.Namespace).UpdateStatus(f.ctx, er, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func waitForContext(ctx context.Context, _ *Request) (Result, error) {
	<-ctx.Done()
	return Result{}, ctx.Err()
}

func complete(reason string) func(*v1alpha1.EvictionRequestStatus) {
	return func(s *v1alpha1.EvictionRequestStatus) {
		apimeta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: string(v1alpha1.EvictionRequestComplete), Status: metav1.ConditionTrue, Reason: reason})
	}
}

// runUntilCleanup runs i until the test ends, then cancels its context and
// waits for Run to return.
func runUntilCleanup(t *testing.T, ctx context.Context, cancel context.CancelFunc, i *Interceptor) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := i.Run(ctx); err != nil {
			t.Errorf("Run() = %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}
