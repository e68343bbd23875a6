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
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
)

const (
	me     = "migrator.example.com"
	other  = "fallback.example.com"
	ns     = "shop"
	name   = "2b5c1e0a-1111-4222-8333-444455556666"
	period = time.Minute
)

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// activeRequest is an EvictionRequest whose active interceptor is active.
func activeRequest(active string) *v1alpha1.EvictionRequest {
	return &v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.EvictionRequestSpec{
			Type:                     v1alpha1.Soft,
			Target:                   v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: "db-0", UID: name}},
			Requesters:               []v1alpha1.Requester{{Name: "drain.example.com"}},
			Interceptors:             []v1alpha1.Interceptor{{Name: other}, {Name: me}},
			HeartbeatDeadlineSeconds: ptr.To[int32](1800),
		},
		Status: v1alpha1.EvictionRequestStatus{ActiveInterceptorName: ptr.To(active)},
	}
}

// fixture runs an interceptor on fake clientsets and a fake clock; its
// handler tells the test each time it runs and does what the test says.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	clock *testingclock.FakeClock
	evr   *erfake.Clientset

	// runs receives the context of every run of the handler.
	runs chan *Request
	// handle is what the handler does; the default waits for its context.
	mu     sync.Mutex
	handle Handler
}

func newFixture(t *testing.T, er *v1alpha1.EvictionRequest, handle Handler) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	f := &fixture{t: t, ctx: ctx, clock: testingclock.NewFakeClock(start), evr: erfake.NewClientset(er), runs: make(chan *Request, 10), handle: handle}
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
		KubeClient:      k8sfake.NewClientset(),
		HeartbeatPeriod: period,
		Clock:           f.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
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
	return f
}

// started waits for the next run of the handler.
func (f *fixture) started() *Request {
	f.t.Helper()
	select {
	case req := <-f.runs:
		return req
	case <-time.After(10 * time.Second):
		f.t.Fatal("the handler did not start")
		return nil
	}
}

// startedAfterBackoff moves the fake clock on until the handler runs again.
func (f *fixture) startedAfterBackoff() {
	f.t.Helper()
	for range 50 {
		f.clock.Step(100 * time.Millisecond)
		select {
		case <-f.runs:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	f.t.Fatal("the handler did not run again")
}

func (f *fixture) notStarted() {
	f.t.Helper()
	select {
	case <-f.runs:
		f.t.Fatal("the handler started")
	case <-time.After(300 * time.Millisecond):
	}
}

func (f *fixture) get() *v1alpha1.EvictionRequest {
	f.t.Helper()
	er, err := f.evr.CoordinationV1alpha1().EvictionRequests(ns).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return er
}

// eventually waits until cond holds for the stored request.
func (f *fixture) eventually(what string, cond func(*v1alpha1.EvictionRequest) error) *v1alpha1.EvictionRequest {
	f.t.Helper()
	var last error
	var er *v1alpha1.EvictionRequest
	err := wait.PollUntilContextTimeout(f.ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		er = f.get()
		last = cond(er)
		return last == nil, nil
	})
	if err != nil {
		f.t.Fatalf("waiting for %s: %v", what, last)
	}
	return er
}

// heartbeatAt waits for a heartbeat stamped t.
func (f *fixture) heartbeatAt(t time.Time) *v1alpha1.EvictionRequest {
	f.t.Helper()
	return f.eventually("a heartbeat at "+t.String(), func(er *v1alpha1.EvictionRequest) error {
		if er.Status.HeartbeatTime == nil || !er.Status.HeartbeatTime.Time.Equal(t) {
			return fmt.Errorf("heartbeat %v", er.Status.HeartbeatTime)
		}
		return nil
	})
}

// nextHeartbeat moves the fake clock on by one period at a time until the
// interceptor heartbeats at the clock's time, and returns the request then:
// the heartbeat ticker may start a moment after the step that should fire it.
func (f *fixture) nextHeartbeat() *v1alpha1.EvictionRequest {
	f.t.Helper()
	for range 20 {
		f.clock.Step(period)
		now := f.clock.Now()
		var er *v1alpha1.EvictionRequest
		err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 500*time.Millisecond, true, func(context.Context) (bool, error) {
			er = f.get()
			return er.Status.HeartbeatTime != nil && er.Status.HeartbeatTime.Time.Equal(now), nil
		})
		if err == nil {
			return er
		}
	}
	f.t.Fatal("no heartbeat after 20 periods")
	return nil
}

func (f *fixture) setStatus(mutate func(*v1alpha1.EvictionRequestStatus)) {
	f.t.Helper()
	er := f.get()
	mutate(&er.Status)
	if _, err := f.evr.CoordinationV1alpha1().EvictionRequests(ns).UpdateStatus(f.ctx, er, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func waitForContext(ctx context.Context, _ *Request) (Result, error) {
	<-ctx.Done()
	return Result{}, ctx.Err()
}

func canceledWithin(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("the handler's context was not canceled when %s", what)
	}
}

func TestHandlerWorksWithHeartbeatsAndCompletes(t *testing.T) {
	release := make(chan Result)
	handlerCtxs := make(chan context.Context, 1)
	f := newFixture(t, activeRequest(me), func(ctx context.Context, req *Request) (Result, error) {
		handlerCtxs <- ctx
		select {
		case result := <-release:
			return result, nil
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	})
	req := f.started()
	if req.Pod().Name != "db-0" || req.PodUID() != name {
		t.Errorf("the handler got pod %v (%s)", req.Pod(), req.PodUID())
	}
	// The first heartbeat adopts the request at once.
	er := f.heartbeatAt(start)
	if !strings.Contains(er.Status.Message, me+" is working") {
		t.Errorf("message after adoption = %q", er.Status.Message)
	}

	// The handler reports progress, an estimate, and forbids cancellation.
	finish := start.Add(10 * time.Minute)
	if err := req.Report(f.ctx, Progress{Message: "copying 3 of 7 volumes", ExpectedFinishTime: &finish, CancellationPolicy: v1alpha1.Forbid}); err != nil {
		t.Fatal(err)
	}
	er = f.get()
	if er.Status.Message != "copying 3 of 7 volumes" || !er.Status.ExpectedInterceptorFinishTime.Time.Equal(finish) ||
		ptr.Deref(er.Status.EvictionRequestCancellationPolicy, "") != v1alpha1.Forbid {
		t.Errorf("status after Report = %+v", er.Status)
	}

	// Heartbeats come on their own every period while the handler works,
	// repeating the last progress.
	for i := 0; i < 3; i++ {
		er = f.nextHeartbeat()
		if er.Status.Message != "copying 3 of 7 volumes" || er.Status.ExpectedInterceptorFinishTime == nil {
			t.Errorf("heartbeat %d dropped the progress: %+v", i, er.Status)
		}
	}

	release <- Complete("volumes copied")
	er = f.eventually("the interceptor to pass the request on", func(er *v1alpha1.EvictionRequest) error {
		if !er.Status.ActiveInterceptorCompleted {
			return errors.New("not completed")
		}
		return nil
	})
	if er.Status.Message != "volumes copied" || er.Status.ExpectedInterceptorFinishTime != nil {
		t.Errorf("status after completion = %+v", er.Status)
	}
	// No more heartbeats once the turn is over.
	written := f.get().Status.HeartbeatTime
	f.clock.Step(5 * period)
	time.Sleep(100 * time.Millisecond)
	if got := f.get().Status.HeartbeatTime; !got.Equal(written) {
		t.Errorf("a heartbeat at %v after the turn ended", got)
	}
	if (<-handlerCtxs).Err() == nil {
		t.Error("the handler's context outlived the turn")
	}
}

func TestDeclinePassesTheRequestOnAtOnce(t *testing.T) {
	f := newFixture(t, activeRequest(me), func(context.Context, *Request) (Result, error) {
		return Decline("pod db-0 is not a database this operator runs"), nil
	})
	f.started()
	er := f.eventually("the request to be passed on", func(er *v1alpha1.EvictionRequest) error {
		if !er.Status.ActiveInterceptorCompleted {
			return errors.New("not completed")
		}
		return nil
	})
	if er.Status.Message != "pod db-0 is not a database this operator runs" {
		t.Errorf("message = %q", er.Status.Message)
	}
}

func TestLosingTheRequestCancelsTheHandler(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(f *fixture)
	}{
		{"hand-off after a missed deadline", func(f *fixture) {
			f.setStatus(func(s *v1alpha1.EvictionRequestStatus) { s.ActiveInterceptorName = ptr.To(other) })
		}},
		{"cancellation", func(f *fixture) {
			f.setStatus(func(s *v1alpha1.EvictionRequestStatus) {
				s.ActiveInterceptorName = nil
				apimeta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: "Complete", Status: metav1.ConditionTrue, Reason: v1alpha1.CompleteReasonCanceled})
			})
		}},
		{"completion", func(f *fixture) {
			f.setStatus(func(s *v1alpha1.EvictionRequestStatus) {
				apimeta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: "Complete", Status: metav1.ConditionTrue, Reason: v1alpha1.CompleteReasonPodDeleted})
			})
		}},
		{"deletion", func(f *fixture) {
			if err := f.evr.CoordinationV1alpha1().EvictionRequests(ns).Delete(f.ctx, name, metav1.DeleteOptions{}); err != nil {
				f.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctxs := make(chan context.Context, 1)
			f := newFixture(t, activeRequest(me), func(ctx context.Context, req *Request) (Result, error) {
				ctxs <- ctx
				return waitForContext(ctx, req)
			})
			req := f.started()
			f.heartbeatAt(start)
			ctx := <-ctxs
			tc.lose(f)
			canceledWithin(t, ctx, tc.name)
			if err := req.Report(context.Background(), Progress{Message: "too late"}); !errors.Is(err, ErrLost) {
				t.Errorf("Report() after losing the request = %v, want ErrLost", err)
			}
			f.notStarted()
		})
	}
}

func TestAFailedHandlerRunsAgainWithoutHeartbeatsMeanwhile(t *testing.T) {
	var mu sync.Mutex
	attempt := 0
	f := newFixture(t, activeRequest(me), func(context.Context, *Request) (Result, error) {
		mu.Lock()
		defer mu.Unlock()
		attempt++
		switch attempt {
		case 1:
			return Result{}, errors.New("the storage backend is unreachable")
		case 2:
			panic("a bug")
		}
		return Complete("done on the third attempt"), nil
	})
	f.started()
	f.heartbeatAt(start)
	// The retry waits for the backoff on the fake clock: no heartbeat
	// keeps the request meanwhile.
	f.notStarted()
	if hb := f.get().Status.HeartbeatTime; !hb.Time.Equal(start) {
		t.Errorf("a heartbeat at %v while the handler was not running", hb)
	}
	f.startedAfterBackoff()
	f.startedAfterBackoff()
	er := f.eventually("completion after the retries", func(er *v1alpha1.EvictionRequest) error {
		if !er.Status.ActiveInterceptorCompleted {
			return errors.New("not completed")
		}
		return nil
	})
	if er.Status.Message != "done on the third attempt" {
		t.Errorf("message = %q", er.Status.Message)
	}
}

func TestTerminatedPodKeepsTheRequestUntilItCompletes(t *testing.T) {
	f := newFixture(t, activeRequest(me), func(context.Context, *Request) (Result, error) {
		return Terminated("deleted pod db-0 after its data moved"), nil
	})
	f.started()
	er := f.eventually("the termination message", func(er *v1alpha1.EvictionRequest) error {
		if er.Status.Message != "deleted pod db-0 after its data moved" {
			return fmt.Errorf("message %q", er.Status.Message)
		}
		return nil
	})
	if er.Status.ActiveInterceptorCompleted {
		t.Error("the interceptor passed the request on although it terminated the pod")
	}
	f.nextHeartbeat()

	// The pod is gone: the controller completes the request, and the
	// interceptor stops heartbeating.
	f.setStatus(func(s *v1alpha1.EvictionRequestStatus) {
		s.ActiveInterceptorName = nil
		apimeta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: "Complete", Status: metav1.ConditionTrue, Reason: v1alpha1.CompleteReasonPodDeleted})
	})
	f.eventually("the completion to be seen", func(er *v1alpha1.EvictionRequest) error { return nil })
	time.Sleep(200 * time.Millisecond)
	written := f.get().Status.HeartbeatTime
	f.clock.Step(3 * period)
	time.Sleep(200 * time.Millisecond)
	if got := f.get().Status.HeartbeatTime; !got.Equal(written) {
		t.Errorf("a heartbeat at %v after the request completed", got)
	}
}

func TestOnlyItsOwnOpenRequestsStartTheHandler(t *testing.T) {
	for _, tc := range []struct {
		name string
		er   *v1alpha1.EvictionRequest
	}{
		{"another interceptor is active", activeRequest(other)},
		{"its turn is over", func() *v1alpha1.EvictionRequest {
			er := activeRequest(me)
			er.Status.ActiveInterceptorCompleted = true
			return er
		}()},
		{"the request is complete", func() *v1alpha1.EvictionRequest {
			er := activeRequest(me)
			er.Status.Conditions = []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: v1alpha1.CompleteReasonPodDeleted}}
			return er
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.er, waitForContext)
			f.notStarted()
			if hb := f.get().Status.HeartbeatTime; hb != nil {
				t.Errorf("the interceptor heartbeated a request it does not hold: %v", hb)
			}
		})
	}
}

func TestResumesARequestItHeldBeforeARestart(t *testing.T) {
	er := activeRequest(me)
	er.Status.HeartbeatTime = ptr.To(metav1.NewTime(start.Add(-5 * time.Minute)))
	er.Status.Message = "copying 3 of 7 volumes"
	f := newFixture(t, er, waitForContext)
	req := f.started()
	if req.EvictionRequest.Status.Message != "copying 3 of 7 volumes" {
		t.Errorf("the resumed handler sees message %q, want the one before the restart", req.EvictionRequest.Status.Message)
	}
	f.heartbeatAt(start)
}

func TestHeartbeatPeriod(t *testing.T) {
	for _, tc := range []struct {
		configured time.Duration
		deadline   int32
		want       time.Duration
	}{
		{0, 1800, 3 * time.Minute},
		{0, 600, time.Minute},
		{10 * time.Second, 600, 10 * time.Second},
		{20 * time.Minute, 600, 5 * time.Minute},
	} {
		er := activeRequest(me)
		er.Spec.HeartbeatDeadlineSeconds = ptr.To(tc.deadline)
		h := &hold{t: &term{cfg: Config{HeartbeatPeriod: tc.configured}}, latest: er}
		if got := h.period(); got != tc.want {
			t.Errorf("period(configured %s, deadline %ds) = %s, want %s", tc.configured, tc.deadline, got, tc.want)
		}
	}
}

func TestNewChecksTheConfig(t *testing.T) {
	if _, err := New(Config{Name: "Not A Name"}); err == nil {
		t.Error("New() accepted a config without a valid name, handler or clients")
	}
}
