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

package eviction

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
)

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func TestNextAndJudge(t *testing.T) {
	order := []string{"c.example.com", "b.example.com", "a.example.com"}
	for current, want := range map[string]string{"": "c.example.com", "c.example.com": "b.example.com", "b.example.com": "a.example.com", "a.example.com": "", "gone.example.com": ""} {
		if got, ok := Next(order, current); got != want || ok != (want != "") {
			t.Errorf("Next(%q) = %q, %v; want %q", current, got, ok, want)
		}
	}
	if _, ok := Next(nil, ""); ok {
		t.Error("Next of nobody found someone")
	}
	deadline := start.Add(21 * time.Minute)
	for _, tc := range []struct {
		completed bool
		now       time.Time
		want      TurnEnd
	}{
		{false, deadline.Add(-time.Second), Waiting},
		{false, deadline, TimedOut},
		{true, start, Completed},
	} {
		if got := Judge(tc.completed, deadline, tc.now); got != tc.want {
			t.Errorf("Judge(completed %v, %s) = %v, want %v", tc.completed, tc.now, got, tc.want)
		}
	}
}

func TestEnded(t *testing.T) {
	pod := wrappers.MakePod("web-0").Obj()
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want Ending
	}{
		{"running", pod, ""},
		{"gone", nil, PodDeleted},
		{"replaced", wrappers.MakePod("web-0").UID("other").Obj(), PodDeleted},
		{"terminal", wrappers.MakePod("web-0").Phase(corev1.PodFailed).Obj(), PodTerminal},
	} {
		if got, message := Ended(tc.pod, "web-0", pod.UID); got != tc.want || (got != "" && message == "") {
			t.Errorf("%s: Ended() = %q, %q; want %q with a message", tc.name, got, message, tc.want)
		}
	}
}

func TestEvictor(t *testing.T) {
	pod := wrappers.MakePod("web-0").Obj()
	kube := kubefake.NewClientset(pod)
	refusal := wrappers.RefusedByBudget("web")
	var preconditions []types.UID
	kube.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		eviction := action.(clienttesting.CreateAction).GetObject().(*policyv1.Eviction)
		preconditions = append(preconditions, *eviction.DeleteOptions.Preconditions.UID)
		return true, nil, refusal
	})
	clock := testingclock.NewFakeClock(start)
	e := &Evictor{Client: kube, Backoff: NewBackoff(), Clock: clock, CallTimeout: time.Second}
	ctx := context.Background()

	attempt := e.Evict(ctx, "k", pod, pod.UID)
	if attempt.Result != Refused || !attempt.Blocked || attempt.Budget != "web" || attempt.RetryIn != time.Second {
		t.Errorf("a budget's refusal: %+v", attempt)
	}
	if attempt := e.Evict(ctx, "k", pod, pod.UID); attempt.Result != NotYet || attempt.RetryIn != time.Second {
		t.Errorf("during the backoff: %+v, want to wait 1s", attempt)
	}
	clock.Step(time.Second)
	refusal = errors.New("connection refused")
	if attempt := e.Evict(ctx, "k", pod, pod.UID); attempt.Result != Refused || attempt.Blocked || attempt.RetryIn != 2*time.Second {
		t.Errorf("a failure: %+v, want a refusal without budget retried in 2s", attempt)
	}
	clock.Step(2 * time.Second)
	refusal = nil
	if attempt := e.Evict(ctx, "k", pod, pod.UID); attempt.Result != Evicted || attempt.RetryIn != ExpectationTimeout {
		t.Errorf("a granted eviction: %+v", attempt)
	}
	for _, uid := range preconditions {
		if uid != pod.UID {
			t.Errorf("an eviction without the pod's UID as precondition: %s", uid)
		}
	}
	if attempt := e.Evict(ctx, "k", wrappers.MakePod("web-0").DaemonSet().Obj(), pod.UID); attempt.Result != Skipped || attempt.Kind != podutil.DaemonSetPod {
		t.Errorf("a DaemonSet pod: %+v", attempt)
	}
	if attempt := e.Evict(ctx, "k", wrappers.MakePod("web-0").Terminating(start).Obj(), pod.UID); attempt.Result != Terminating {
		t.Errorf("a terminating pod: %+v", attempt)
	}
}

// Whose eviction started a terminating pod stays known on every attempt
// until the key is forgotten: the controllers say it in their messages.
func TestATerminatingPodKeepsTheGrantUntilForgotten(t *testing.T) {
	pod := wrappers.MakePod("web-0").Obj()
	clock := testingclock.NewFakeClock(start)
	e := &Evictor{Client: kubefake.NewClientset(pod), Backoff: NewBackoff(), Clock: clock, CallTimeout: time.Second}
	ctx := context.Background()
	if attempt := e.Evict(ctx, "k", pod, pod.UID); attempt.Result != Evicted {
		t.Fatalf("first attempt: %+v", attempt)
	}
	terminating := wrappers.MakePod("web-0").Terminating(start).Obj()
	for i := 0; i < 2; i++ {
		if attempt := e.Evict(ctx, "k", terminating, pod.UID); attempt.Result != Terminating || !attempt.Granted {
			t.Errorf("attempt %d on the terminating pod: %+v, want Terminating and Granted", i, attempt)
		}
	}
	if wait := e.Backoff.Wait("k", clock.Now()); wait != 0 {
		t.Errorf("a terminating pod still waits %s for its next eviction", wait)
	}
	e.Backoff.Forget("k")
	if attempt := e.Evict(ctx, "k", terminating, pod.UID); attempt.Granted {
		t.Errorf("after Forget: %+v, want not Granted", attempt)
	}
	if attempt := e.Evict(ctx, "other", terminating, pod.UID); attempt.Granted {
		t.Errorf("a pod another party deleted: %+v, want not Granted", attempt)
	}
}

func TestRefusingBudget(t *testing.T) {
	if got := RefusingBudget(wrappers.RefusedByBudget("db-strict")); got != "db-strict" {
		t.Errorf("RefusingBudget = %q, want db-strict", got)
	}
	if got := RefusingBudget(errors.New("connection refused")); got != "" {
		t.Errorf("RefusingBudget of another error = %q", got)
	}
}

func TestBackoffIsCappedNearFifteenMinutes(t *testing.T) {
	b := NewBackoff()
	var delay time.Duration
	for i := 0; i < 30; i++ {
		delay = b.Failed("shop/web-0", start, 0)
	}
	if delay != 15*time.Minute {
		t.Errorf("delay after 30 failures = %s, want the 15m cap", delay)
	}
	if wait := b.Wait("shop/web-0", start.Add(14*time.Minute)); wait != time.Minute {
		t.Errorf("wait 14m into a 15m backoff = %s, want 1m", wait)
	}
	b.Forget("shop/web-0")
	if delay := b.Failed("shop/web-0", start, 0); delay != time.Second {
		t.Errorf("first delay after forget = %s, want 1s", delay)
	}
}
