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
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

func TestHandlerWorksWithHeartbeatsAndCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan Result)
		handlerCtxs := make(chan context.Context, 1)
		f := newFixture(t, activeRequest(me).Obj(), func(ctx context.Context, req *Request) (Result, error) {
			handlerCtxs <- ctx
			select {
			case result := <-release:
				return result, nil
			case <-ctx.Done():
				return Result{}, ctx.Err()
			}
		})
		req := f.started()
		if req.Pod().Name != "db-0" || req.PodUID() != "uid-db-0" {
			t.Errorf("the handler got pod %v (%s)", req.Pod(), req.PodUID())
		}
		// The first heartbeat adopts the request at once.
		if er := f.heartbeat(f.start); !strings.Contains(er.Status.Message, me+" is working") {
			t.Errorf("message after adoption = %q", er.Status.Message)
		}

		// The handler reports progress, an estimate, and forbids cancellation.
		finish := f.start.Add(10 * time.Minute)
		if err := req.Report(f.ctx, Progress{Message: "copying 3 of 7 volumes", ExpectedFinishTime: &finish, CancellationPolicy: v1alpha1.Forbid}); err != nil {
			t.Fatal(err)
		}
		er := f.get()
		if er.Status.Message != "copying 3 of 7 volumes" || !er.Status.ExpectedInterceptorFinishTime.Time.Equal(finish) ||
			ptr.Deref(er.Status.EvictionRequestCancellationPolicy, "") != v1alpha1.Forbid {
			t.Errorf("status after Report = %+v", er.Status)
		}

		// Heartbeats come on their own every period while the handler
		// works, repeating the last progress.
		for i := range 3 {
			if er := f.nextHeartbeat(); er.Status.Message != "copying 3 of 7 volumes" || er.Status.ExpectedInterceptorFinishTime == nil {
				t.Errorf("heartbeat %d dropped the progress: %+v", i, er.Status)
			}
		}

		release <- Complete("volumes copied")
		er = f.get()
		if !er.Status.ActiveInterceptorCompleted || er.Status.Message != "volumes copied" || er.Status.ExpectedInterceptorFinishTime != nil {
			t.Errorf("status after completion = %+v", er.Status)
		}
		// No more heartbeats once the turn is over.
		written := er.Status.HeartbeatTime
		f.clock.Step(5 * period)
		if got := f.get().Status.HeartbeatTime; !got.Equal(written) {
			t.Errorf("a heartbeat at %v after the turn ended", got)
		}
		if (<-handlerCtxs).Err() == nil {
			t.Error("the handler's context outlived the turn")
		}
	})
}

func TestDeclinePassesTheRequestOnAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, activeRequest(me).Obj(), func(context.Context, *Request) (Result, error) {
			return Decline("pod db-0 is not a database this operator runs"), nil
		})
		f.started()
		if er := f.get(); !er.Status.ActiveInterceptorCompleted || er.Status.Message != "pod db-0 is not a database this operator runs" {
			t.Errorf("status after a decline = %+v", er.Status)
		}
	})
}

// A Handler that waits returns Requeue: it is called again after the
// duration, and the request is kept by heartbeats meanwhile.
func TestRequeueCallsTheHandlerAgainWithHeartbeatsBetween(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls := 0
		f := newFixture(t, activeRequest(me).Obj(), func(ctx context.Context, req *Request) (Result, error) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if err := req.Report(ctx, Progress{Message: "waiting for the replica to catch up"}); err != nil {
				return Result{}, err
			}
			if n < 3 {
				return Requeue(3 * period), nil
			}
			return Complete("caught up"), nil
		})
		f.started()
		for range 2 {
			f.nextHeartbeat()
		}
		f.clock.Step(period - time.Second)
		f.notStarted()
		f.startedAfter(time.Second)
		f.startedAfter(3 * period)
		if er := f.get(); !er.Status.ActiveInterceptorCompleted || er.Status.Message != "caught up" {
			t.Errorf("status after the third call = %+v", er.Status)
		}
	})
}

// Reporting the same progress again writes nothing: the heartbeats carry it.
func TestAnUnchangedReportIsNotWrittenAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, activeRequest(me).Obj(), waitForContext)
		req := f.started()
		finish := f.start.Add(time.Hour)
		progress := Progress{Message: "copying", ExpectedFinishTime: &finish, CancellationPolicy: v1alpha1.Allow}
		if err := req.Report(f.ctx, progress); err != nil {
			t.Fatal(err)
		}
		before := wrappers.StatusUpdates(f.evr.Actions())
		later := finish.Add(0)
		if err := req.Report(f.ctx, Progress{Message: "copying", ExpectedFinishTime: &later}); err != nil {
			t.Fatal(err)
		}
		if after := wrappers.StatusUpdates(f.evr.Actions()); after != before {
			t.Errorf("an unchanged Report wrote the status %d times", after-before)
		}
		if err := req.Report(f.ctx, Progress{Message: "copying, 50%"}); err != nil {
			t.Fatal(err)
		}
		if er := f.get(); er.Status.Message != "copying, 50%" || wrappers.StatusUpdates(f.evr.Actions()) != before+1 {
			t.Errorf("a changed Report: message %q, %d writes", er.Status.Message, wrappers.StatusUpdates(f.evr.Actions())-before)
		}
	})
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
				complete(v1alpha1.CompleteReasonCanceled)(s)
			})
		}},
		{"completion", func(f *fixture) { f.setStatus(complete(v1alpha1.CompleteReasonPodDeleted)) }},
		{"deletion", func(f *fixture) {
			if err := f.evr.CoordinationV1alpha1().EvictionRequests(f.er.Namespace).Delete(f.ctx, f.er.Name, metav1.DeleteOptions{}); err != nil {
				f.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctxs := make(chan context.Context, 1)
				f := newFixture(t, activeRequest(me).Obj(), func(ctx context.Context, req *Request) (Result, error) {
					ctxs <- ctx
					return waitForContext(ctx, req)
				})
				req := f.started()
				f.heartbeat(f.start)
				ctx := <-ctxs
				tc.lose(f)
				settle()
				if ctx.Err() == nil {
					t.Fatalf("the handler's context was not canceled on %s", tc.name)
				}
				if err := req.Report(context.Background(), Progress{Message: "too late"}); !errors.Is(err, ErrLost) {
					t.Errorf("Report() after losing the request = %v, want ErrLost", err)
				}
				f.notStarted()
			})
		})
	}
}

func TestAFailedHandlerRunsAgainWithoutHeartbeatsMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		attempt := 0
		f := newFixture(t, activeRequest(me).Obj(), func(context.Context, *Request) (Result, error) {
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
		f.heartbeat(f.start)
		// The retry waits for its backoff (1s, then 2s): no heartbeat keeps
		// the request meanwhile.
		f.clock.Step(999 * time.Millisecond)
		f.notStarted()
		f.heartbeat(f.start)
		f.startedAfter(time.Millisecond)
		f.startedAfter(2 * time.Second)
		if er := f.get(); !er.Status.ActiveInterceptorCompleted || er.Status.Message != "done on the third attempt" {
			t.Errorf("status after the retries = %+v", er.Status)
		}
	})
}

func TestTerminatedPodKeepsTheRequestUntilItCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, activeRequest(me).Obj(), func(context.Context, *Request) (Result, error) {
			return Terminated("deleted pod db-0 after its data moved"), nil
		})
		f.started()
		if er := f.get(); er.Status.Message != "deleted pod db-0 after its data moved" || er.Status.ActiveInterceptorCompleted {
			t.Errorf("status after the pod was terminated = %+v", er.Status)
		}
		f.nextHeartbeat()

		// The pod is gone: the controller completes the request, and the
		// interceptor stops heartbeating.
		f.setStatus(func(s *v1alpha1.EvictionRequestStatus) {
			s.ActiveInterceptorName = nil
			complete(v1alpha1.CompleteReasonPodDeleted)(s)
		})
		written := f.get().Status.HeartbeatTime
		f.clock.Step(3 * period)
		if got := f.get().Status.HeartbeatTime; !got.Equal(written) {
			t.Errorf("a heartbeat at %v after the request completed", got)
		}
	})
}

func TestOnlyItsOwnOpenRequestsStartTheHandler(t *testing.T) {
	for _, tc := range []struct {
		name string
		er   *v1alpha1.EvictionRequest
	}{
		{"another interceptor is active", activeRequest(other).Obj()},
		{"its turn is over", activeRequest(me).ActiveCompleted().Obj()},
		{"the request is complete", activeRequest(me).Complete(v1alpha1.CompleteReasonPodDeleted, "done").Active(me).Obj()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, tc.er, waitForContext)
				f.notStarted()
				if hb := f.get().Status.HeartbeatTime; hb != nil {
					t.Errorf("the interceptor heartbeated a request it does not hold: %v", hb)
				}
			})
		})
	}
}

func TestResumesARequestItHeldBeforeARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		er := activeRequest(me).Heartbeat(start.Add(-5 * time.Minute)).Message("copying 3 of 7 volumes").Obj()
		f := newFixture(t, er, waitForContext)
		req := f.started()
		if req.EvictionRequest.Status.Message != "copying 3 of 7 volumes" {
			t.Errorf("the resumed handler sees message %q, want the one before the restart", req.EvictionRequest.Status.Message)
		}
		f.heartbeat(f.start)
	})
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
		er := activeRequest(me).HeartbeatDeadlineSeconds(tc.deadline).Obj()
		if got := (coordinationAPI{}).period(er, tc.configured); got != tc.want {
			t.Errorf("period(configured %s, deadline %ds) = %s, want %s", tc.configured, tc.deadline, got, tc.want)
		}
	}
}

// On lifecycle.k8s.io the deadline is 20 minutes and responders keep 20
// seconds between heartbeats.
func TestLifecycleHeartbeatPeriod(t *testing.T) {
	for configured, want := range map[time.Duration]time.Duration{
		0:                2 * time.Minute,
		5 * time.Second:  20 * time.Second,
		30 * time.Second: 30 * time.Second,
		time.Hour:        10 * time.Minute,
	} {
		if got := (lifecycleAPI{}).period(nil, configured); got != want {
			t.Errorf("period(configured %s) = %s, want %s", configured, got, want)
		}
	}
}

func TestNewChecksTheConfig(t *testing.T) {
	if _, err := New(Config{Name: "Not A Name"}); err == nil {
		t.Error("New() accepted a config without a valid name, handler or clients")
	}
}
