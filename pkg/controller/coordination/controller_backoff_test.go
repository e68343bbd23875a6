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

package coordination

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
)

func TestFailedEvictionsBackOff(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.failEvictions(tooManyRequests(0))
	blockedBefore, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultBlocked))

	var delays []time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		delay := f.sync()
		delays = append(delays, delay)
		if got := f.get().Status.PodEvictionStatus.FailedAPIEvictionCounter; got != int32(attempt) {
			t.Fatalf("failedAPIEvictionCounter = %d after %d failed evictions", got, attempt)
		}
		// The status write wakes the controller before the backoff ends: it
		// must not evict again.
		if early := f.sync(); early != delay || len(f.evicted()) != attempt {
			t.Fatalf("sync during the backoff: requeue %s and %d evictions; want %s and %d", early, len(f.evicted()), delay, attempt)
		}
		f.clock.Step(delay)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, delays); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	if msg := f.get().Status.Message; !strings.Contains(msg, "(attempts=4)") || !strings.Contains(msg, "disruption budget") {
		t.Errorf("status.message = %q, want the attempt count and the API's reason", msg)
	}
	blockedAfter, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultBlocked))
	if blockedAfter != blockedBefore+4 {
		t.Errorf("evictions{result=blocked} went from %v to %v, want +4", blockedBefore, blockedAfter)
	}
	f.expectEvents("Warning "+EventEvictionFailed, "Warning "+EventEvictionFailed, "Warning "+EventEvictionFailed, "Warning "+EventEvictionFailed)

	// The PDB allows the disruption now.
	f.failEvictions(nil)
	f.sync()
	if len(f.evicted()) != 5 {
		t.Errorf("evictions = %d, want the fifth to succeed", len(f.evicted()))
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.failEvictions(tooManyRequests(10))
	if delay := f.sync(); delay != 10*time.Second {
		t.Errorf("delay after a 429 with Retry-After: 10 = %s, want 10s", delay)
	}
	f.failEvictions(apierrors.NewInternalError(context.DeadlineExceeded))
	f.clock.Step(10 * time.Second)
	if delay := f.sync(); delay != 2*time.Second {
		t.Errorf("delay after a 500 = %s, want the exponential 2s", delay)
	}
	if got := f.get().Status.PodEvictionStatus.FailedAPIEvictionCounter; got != 2 {
		t.Errorf("failedAPIEvictionCounter = %d, want 2: a 5xx counts too", got)
	}
}

func TestHeartbeatCancelsPendingEviction(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	er := newEvictionRequest("a.example.com")
	er.Status.ActiveInterceptorName = ptr.To("a.example.com")
	f.addEvictionRequest(er)
	f.failEvictions(tooManyRequests(0))

	f.clock.Step(10 * time.Minute)
	var pending time.Duration
	for i := 0; i < 3; i++ {
		f.clock.Step(pending)
		pending = f.sync()
	}
	if len(f.evicted()) != 3 || pending != 4*time.Second {
		t.Fatalf("evictions = %d with %s to the next one, want 3 and 4s while a is silent", len(f.evicted()), pending)
	}

	// a comes back with a heartbeat during the backoff: the pending eviction
	// is off.
	f.clock.Step(time.Second)
	f.setStatus(func(s *v1alpha1.EvictionRequestStatus) { s.HeartbeatTime = ptr.To(metav1.NewTime(f.clock.Now())) })
	if requeue := f.sync(); requeue != 10*time.Minute {
		t.Errorf("requeue after a fresh heartbeat = %s, want a's deadline", requeue)
	}
	if wait := f.controller.backoff.Wait(key, f.clock.Now()); wait != 0 {
		t.Errorf("the eviction backoff survived the heartbeat: %s left", wait)
	}
	f.clock.Step(pending)
	f.sync()
	if len(f.evicted()) != 3 {
		t.Errorf("evictions = %d after the heartbeat, want still 3", len(f.evicted()))
	}

	// a falls silent again: eviction resumes with a fresh backoff.
	f.clock.Step(10 * time.Minute)
	if delay := f.sync(); len(f.evicted()) != 4 || delay != time.Second {
		t.Errorf("after a new time-out: %d evictions and a %s backoff, want 4 and 1s", len(f.evicted()), delay)
	}
}

func TestFailedEvictionIsCountedDespiteAConflict(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.failEvictions(tooManyRequests(0))
	conflicts := 1
	f.erClient.PrependReactor("update", "evictionrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() == "status" && conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupName, Resource: "evictionrequests"}, podUID, nil)
		}
		return false, nil, nil
	})
	f.sync()
	if got := f.get().Status.PodEvictionStatus; got == nil || got.FailedAPIEvictionCounter != 1 {
		t.Errorf("podEvictionStatus = %+v after a conflicting write, want the failure counted", got)
	}
}

// TestAnUnresponsiveClusterTimesTheEvictionOut points the controller at a
// kube-apiserver that never answers, as one whose etcd is frozen: the
// eviction call ends at the call timeout, is counted as a failed attempt and
// retried after a backoff, instead of holding the worker.
func TestAnUnresponsiveClusterTimesTheEvictionOut(t *testing.T) {
	f := newFixture(t)
	thaw := make(chan struct{})
	frozen := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-thaw:
		}
	}))
	defer frozen.Close()
	defer close(thaw)
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: frozen.URL})
	if err != nil {
		t.Fatal(err)
	}
	f.controller.kubeClient = kube
	f.controller.callTimeout = 100 * time.Millisecond
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())

	synced := make(chan time.Duration, 1)
	go func() {
		requeue, err := f.controller.sync(f.ctx, key)
		if err != nil {
			t.Errorf("sync: %v", err)
		}
		synced <- requeue
	}()
	select {
	case requeue := <-synced:
		if requeue <= 0 {
			t.Errorf("a timed-out eviction is not retried: requeue %s", requeue)
		}
	case <-time.After(time.Minute):
		t.Fatal("the eviction call never returned: it has no timeout")
	}
	er := f.get()
	if er.Status.PodEvictionStatus == nil || er.Status.PodEvictionStatus.FailedAPIEvictionCounter != 1 {
		t.Errorf("the timed-out eviction is not counted: %+v", er.Status.PodEvictionStatus)
	}
	if !strings.Contains(er.Status.Message, "deadline") && !strings.Contains(er.Status.Message, "Timeout") {
		t.Errorf("status.message does not say the call timed out: %q", er.Status.Message)
	}
}
