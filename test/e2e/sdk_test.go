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
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// step reads the step an interceptor of examples/sample-interceptor
// reported last, 0 when none.
func step(er *v1alpha1.EvictionRequest) int {
	m := regexp.MustCompile(`: step (\d+) of \d+$`).FindStringSubmatch(er.Status.Message)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// An interceptor process killed mid-work and started again resumes the
// request it held, where it was, before its deadline passes it over.
func TestSDKInterceptorProcessResumesAfterARestart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "sample.e2e.example.com"
	args := []string{"--namespace=" + ns, "--name=" + name, "--steps=6", "--step-duration=2s", "--heartbeat-period=1s", "-v=2"}
	first := f.StartCommand(t, "sample-interceptor", args...)

	pod := f.CreatePod(t, ns, "db-0", framework.PodOptions{Interceptors: []string{name}})
	nodeDrain := newRequester(t, "nodemaintenance.k8s.io")
	if _, err := nodeDrain.Request(ctx, pod); err != nil {
		t.Fatal(err)
	}
	uid := string(pod.UID)
	before := f.WaitForRequest(t, ns, uid, "the interceptor at step 2", func(er *v1alpha1.EvictionRequest) error {
		if step(er) < 2 {
			return fmt.Errorf("message %q", er.Status.Message)
		}
		return nil
	})
	if before.Status.ExpectedInterceptorFinishTime == nil {
		t.Errorf("the interceptor reports no ETA: %+v", before.Status)
	}

	// The process crashes mid-work: the request stays with it.
	first.Kill()
	killed := time.Now()
	stopped, err := f.EvictionRequests(ns).Get(ctx, uid, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := step(stopped)
	if ptr.Deref(stopped.Status.ActiveInterceptorName, "") != name || stopped.Status.ActiveInterceptorCompleted || coordinationutil.IsComplete(stopped) {
		t.Fatalf("after the crash the request moved on: %+v", stopped.Status)
	}

	second := f.StartCommand(t, "sample-interceptor", args...)
	f.WaitForRequest(t, ns, uid, "the restarted interceptor to finish", func(er *v1alpha1.EvictionRequest) error {
		if er.Status.HeartbeatTime == nil || !er.Status.HeartbeatTime.After(killed.Add(-time.Second)) {
			return fmt.Errorf("no heartbeat since the restart: %+v", er.Status)
		}
		if !coordinationutil.IsComplete(er) && !er.Status.ActiveInterceptorCompleted {
			return fmt.Errorf("still working: %q", er.Status.Message)
		}
		return nil
	})
	f.WaitForCompletion(t, ns, uid, v1alpha1.CompleteReasonPodDeleted)
	if got := second.Stderr(); !regexp.MustCompile(fmt.Sprintf(`"Resuming".* step=%d\b`, at)).MatchString(got) {
		t.Errorf("the restarted interceptor did not resume at step %d; its log:\n%s", at, got)
	}
	if reasons := f.EventReasons(t, ns, "", uid); slices.Contains(reasons, coordinationcontroller.EventInterceptorTimedOut) {
		t.Errorf("the interceptor was passed over: events %v", reasons)
	}
}

// A handler that works longer than a heartbeat period, without reporting,
// keeps its request by the SDK's own heartbeats.
func TestSDKHeartbeatsKeepALongHandler(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "long.e2e.example.com"
	working := make(chan struct{})
	finish := make(chan struct{})
	f.StartInterceptor(t, ns, name, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		close(working)
		select {
		case <-finish:
			return interceptor.Complete("long work done"), nil
		case <-ctx.Done():
			return interceptor.Result{}, ctx.Err()
		}
	})
	pod := f.CreatePod(t, ns, "batch-0", framework.PodOptions{Interceptors: []string{name}})
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, pod); err != nil {
		t.Fatal(err)
	}
	select {
	case <-working:
	case <-time.After(framework.DefaultTimeout):
		t.Fatal("the handler never started")
	}
	heartbeats := map[time.Time]bool{}
	framework.Eventually(t, time.Minute, "four heartbeats while the handler works", func(ctx context.Context) error {
		er, err := f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ptr.Deref(er.Status.ActiveInterceptorName, "") != name || er.Status.ActiveInterceptorCompleted || coordinationutil.IsComplete(er) {
			return fmt.Errorf("the interceptor lost the request: %+v", er.Status)
		}
		if er.Status.HeartbeatTime != nil {
			heartbeats[er.Status.HeartbeatTime.Time] = true
		}
		if len(heartbeats) < 4 {
			return fmt.Errorf("%d heartbeats so far", len(heartbeats))
		}
		return nil
	})
	close(finish)
	f.WaitForCompletion(t, ns, string(pod.UID), v1alpha1.CompleteReasonPodDeleted)
}

// The handler's context ends the moment the interceptor loses the request:
// here, the request is deleted.
func TestSDKLosingTheRequestCancelsTheHandler(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "cancelable.e2e.example.com"
	var mu sync.Mutex
	var started, canceled time.Time
	f.StartInterceptor(t, ns, name, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		mu.Lock()
		started = time.Now()
		mu.Unlock()
		<-ctx.Done()
		mu.Lock()
		canceled = time.Now()
		mu.Unlock()
		return interceptor.Result{}, ctx.Err()
	})
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{Interceptors: []string{name}})
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, pod); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.DefaultTimeout, "the handler to start", func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if started.IsZero() {
			return fmt.Errorf("not started")
		}
		return nil
	})
	deleted := time.Now()
	if err := f.EvictionRequests(ns).Delete(ctx, string(pod.UID), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, "the handler's context to end", func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if canceled.IsZero() {
			return fmt.Errorf("still running")
		}
		return nil
	})
	t.Logf("the handler was canceled %s after the request was deleted", canceled.Sub(deleted))
}

// Requesters through the SDK: each applies its own entry and withdraws
// only its own; the request is owned by the pod, so the garbage collector
// deletes it with the pod.
func TestSDKRequestersShareARequestOwnedByThePod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "db-0")
	drain, descheduler := ownedRequester(t, "drain.example.com"), ownedRequester(t, "descheduler.example.com")
	for _, r := range []interface {
		Request(context.Context, *corev1.Pod) (*v1alpha1.EvictionRequest, error)
	}{drain, descheduler, drain} {
		if _, err := r.Request(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	er, err := f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := requesterNames(er); !slices.Equal(got, []string{"descheduler.example.com", "drain.example.com"}) {
		t.Errorf("requesters %v", got)
	}
	if len(er.OwnerReferences) != 1 || er.OwnerReferences[0].UID != pod.UID {
		t.Errorf("ownerReferences %+v, want the pod", er.OwnerReferences)
	}
	if _, err := drain.Withdraw(ctx, ns, pod.UID); err != nil {
		t.Fatal(err)
	}
	er, err = f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := requesterNames(er); !slices.Equal(got, []string{"descheduler.example.com"}) {
		t.Errorf("requesters after drain withdrew: %v", got)
	}

	// The pod goes (its interceptor never answers, so it is deleted by
	// hand); the garbage collector deletes the request with it.
	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	result, err := descheduler.Wait(ctx, pod)
	if err != nil || result.Reason != v1alpha1.CompleteReasonPodDeleted {
		t.Errorf("Wait() = %+v, %v; want PodDeleted", result, err)
	}
	framework.Eventually(t, 2*time.Minute, "the garbage collector to delete the request", func(ctx context.Context) error {
		_, err := f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
}

func requesterNames(er *v1alpha1.EvictionRequest) []string {
	var names []string
	for _, r := range er.Spec.Requesters {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	return names
}
