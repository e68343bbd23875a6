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

package framework

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultTimeout bounds how long the waits of the suite wait for the
// controllers; the eviction backoff is the longest of their waits in the
// flows the suite plays.
const DefaultTimeout = 2 * time.Minute

// Eventually polls condition every 250ms until it returns nil, failing the
// test with the last error after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, condition func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := condition(ctx)
		if err != nil && last != nil && nearDeadline(ctx) {
			// A call cut short by the deadline, or refused by client-go's
			// rate limiter because it would be, says nothing of the
			// condition: keep what the one before said.
			return false, nil
		}
		last = err
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last: %v)", what, err, last)
	}
}

// nearDeadline is true when ctx ended or ends within a second.
func nearDeadline(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ctx.Err() != nil || (ok && time.Until(deadline) < time.Second)
}

// Consistently polls condition every 250ms for d and fails the test the
// first time it returns an error: the check that something does not happen
// within the time it would have taken to happen. The condition gets the
// test's context, not the window's: a call near the window's end is not
// cut short into an error of its own.
func Consistently(t testing.TB, d time.Duration, what string, condition func(ctx context.Context) error) {
	t.Helper()
	var failed error
	_ = wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, d, true, func(context.Context) (bool, error) {
		failed = condition(t.Context())
		return failed != nil, nil
	})
	if failed != nil {
		t.Fatalf("%s: %v", what, failed)
	}
}

// WaitFor reads an object with get until cond accepts it, at most
// DefaultTimeout, and returns it: the one wait of the suite, which every
// WaitFor* helper is.
func WaitFor[T any](t testing.TB, what string, get func(ctx context.Context) (T, error), cond func(T) error) T {
	t.Helper()
	var got T
	Eventually(t, DefaultTimeout, what, func(ctx context.Context) error {
		current, err := get(ctx)
		if err != nil {
			return err
		}
		got = current
		return cond(current)
	})
	return got
}

// WaitForNode waits until the node name satisfies cond and returns it.
func (f *Framework) WaitForNode(t testing.TB, name, what string, cond func(*corev1.Node) error) *corev1.Node {
	t.Helper()
	return WaitFor(t, what, func(ctx context.Context) (*corev1.Node, error) {
		return f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}, cond)
}

// WaitForPodGone waits until the pod ns/name no longer exists.
func (f *Framework) WaitForPodGone(t testing.TB, ns, name string) {
	t.Helper()
	Eventually(t, DefaultTimeout, "pod "+name+" to be gone", func(ctx context.Context) error {
		_, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("pod still there: %v", err)
	})
}

// WaitForDeployment waits until the Deployment ns/name satisfies cond and
// returns it.
func (f *Framework) WaitForDeployment(t testing.TB, ns, name, what string, cond func(*appsv1.Deployment) error) *appsv1.Deployment {
	t.Helper()
	return WaitFor(t, what, func(ctx context.Context) (*appsv1.Deployment, error) {
		return f.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	}, cond)
}
