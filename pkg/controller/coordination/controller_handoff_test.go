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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

func TestInterceptorSelectionAndHandOff(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest("a.example.com", "b.example.com", "c.example.com"))

	// The highest index goes first; without a heartbeat its deadline counts
	// from the creation of the request.
	f.clock.Step(time.Minute)
	if requeue := f.sync(); requeue != 9*time.Minute {
		t.Errorf("requeue after selection = %s, want the 9m left of the deadline counted from creation", requeue)
	}
	er := f.get()
	if activeName(er) != "c.example.com" || er.Status.HeartbeatTime != nil || er.Status.ActiveInterceptorCompleted {
		t.Errorf("after selection: active %q, heartbeat %v, completed %v; want c.example.com, none, false",
			activeName(er), er.Status.HeartbeatTime, er.Status.ActiveInterceptorCompleted)
	}
	f.expectEvents("Normal " + EventInterceptorSelected)

	// c answers and works: the controller waits for its deadline, no polling.
	f.clock.Step(2 * time.Minute)
	f.setStatus(func(s *v1alpha1.EvictionRequestStatus) {
		s.HeartbeatTime = ptr.To(metav1.NewTime(f.clock.Now()))
		s.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(f.clock.Now().Add(time.Hour)))
	})
	if requeue := f.sync(); requeue != 10*time.Minute {
		t.Errorf("requeue while c heartbeats = %s, want its full deadline of 10m", requeue)
	}
	if activeName(f.get()) != "c.example.com" {
		t.Fatalf("c was replaced while it heartbeats")
	}

	// c completes: b takes over at once, with the fields reset.
	f.clock.Step(time.Minute)
	f.setStatus(func(s *v1alpha1.EvictionRequestStatus) { s.ActiveInterceptorCompleted = true })
	if requeue := f.sync(); requeue != 10*time.Minute {
		t.Errorf("requeue after the hand-off = %s, want b's deadline of 10m", requeue)
	}
	er = f.get()
	if activeName(er) != "b.example.com" || er.Status.ActiveInterceptorCompleted || er.Status.ExpectedInterceptorFinishTime != nil ||
		!er.Status.HeartbeatTime.Time.Equal(f.clock.Now()) {
		t.Errorf("after c completed: %+v; want b active, completed false, heartbeat now, no expected finish time", er.Status)
	}
	if !strings.Contains(er.Status.Message, "b.example.com replaced c.example.com, which completed") {
		t.Errorf("hand-off message = %q", er.Status.Message)
	}
	f.expectEvents("Normal " + EventInterceptorHandedOff)
	if len(f.evicted()) != 0 {
		t.Errorf("the pod was evicted while interceptors were left: %v", f.evicted())
	}
}

func TestHeartbeatDeadlines(t *testing.T) {
	cases := map[string]struct {
		heartbeat *time.Time
		// elapsed since the creation of the request when the controller syncs.
		elapsed     time.Duration
		wantActive  string
		wantRequeue time.Duration
	}{
		"deadline from creation not passed": {elapsed: 9 * time.Minute, wantActive: "b.example.com", wantRequeue: time.Minute},
		"deadline from creation passed":     {elapsed: 10 * time.Minute, wantActive: "a.example.com", wantRequeue: 10 * time.Minute},
		"deadline from heartbeat not passed": {
			heartbeat: ptr.To(start.Add(5 * time.Minute)), elapsed: 14*time.Minute + 59*time.Second,
			wantActive: "b.example.com", wantRequeue: time.Second,
		},
		"deadline from heartbeat passed": {
			heartbeat: ptr.To(start.Add(5 * time.Minute)), elapsed: 15 * time.Minute,
			wantActive: "a.example.com", wantRequeue: 10 * time.Minute,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.addPod(newPod())
			er := newEvictionRequest("a.example.com", "b.example.com")
			er.Status.ActiveInterceptorName = ptr.To("b.example.com")
			if tc.heartbeat != nil {
				er.Status.HeartbeatTime = ptr.To(metav1.NewTime(*tc.heartbeat))
			}
			f.addEvictionRequest(er)
			f.clock.SetTime(start.Add(tc.elapsed))

			if requeue := f.sync(); requeue != tc.wantRequeue {
				t.Errorf("requeue = %s, want %s", requeue, tc.wantRequeue)
			}
			got := f.get()
			if activeName(got) != tc.wantActive {
				t.Errorf("active interceptor = %q, want %q", activeName(got), tc.wantActive)
			}
			if tc.wantActive == "a.example.com" {
				if !strings.Contains(got.Status.Message, "missed its heartbeat deadline") {
					t.Errorf("message of a time-out = %q", got.Status.Message)
				}
				f.expectEvents("Warning " + EventInterceptorTimedOut)
			}
		})
	}
}

func TestLastInterceptorDoneEvicts(t *testing.T) {
	cases := map[string]func(*v1alpha1.EvictionRequestStatus){
		"completed": func(s *v1alpha1.EvictionRequestStatus) { s.ActiveInterceptorCompleted = true },
		"timed out": func(s *v1alpha1.EvictionRequestStatus) {
			s.HeartbeatTime = ptr.To(metav1.NewTime(start.Add(-11 * time.Minute)))
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.addPod(newPod())
			er := newEvictionRequest("a.example.com", "b.example.com")
			er.Status.ActiveInterceptorName = ptr.To("a.example.com")
			mutate(&er.Status)
			f.addEvictionRequest(er)

			f.sync()
			if len(f.evicted()) != 1 {
				t.Errorf("evictions = %v, want one once the last interceptor is done", f.evicted())
			}
			if activeName(f.get()) != "a.example.com" {
				t.Errorf("the active interceptor changed to %q; it stays until completion", activeName(f.get()))
			}
		})
	}
}
