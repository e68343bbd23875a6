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

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

// watchUntil lists objects, then watches them from the list's
// resourceVersion, until one that match accepts satisfies cond, at most
// DefaultTimeout: every version of an object is seen, even one the
// garbage collector removes a moment later. A watch that ends is
// resumed by a new list.
func watchUntil[T any](t testing.TB, what string, list func(ctx context.Context) ([]T, string, error),
	watchFrom func(ctx context.Context, resourceVersion string) (watch.Interface, error), match func(T) bool, cond func(T) error) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), DefaultTimeout)
	defer cancel()
	last := fmt.Errorf("nothing seen")
	check := func(obj T) bool {
		if !match(obj) {
			return false
		}
		last = cond(obj)
		return last == nil
	}
	for ctx.Err() == nil {
		items, resourceVersion, err := list(ctx)
		if err != nil {
			last = err
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		for _, obj := range items {
			if check(obj) {
				return obj
			}
		}
		w, err := watchFrom(ctx, resourceVersion)
		if err != nil {
			last = err
			continue
		}
		for e := range w.ResultChan() {
			if obj, ok := e.Object.(T); ok && e.Type != watch.Error && check(obj) {
				w.Stop()
				return obj
			}
		}
		w.Stop()
	}
	t.Fatalf("waiting for %s: %v (last: %v)", what, ctx.Err(), last)
	var zero T
	return zero
}

// WaitForEviction watches the Evictions of pod's namespace until one of
// pod satisfies cond, and returns it.
func (f *Framework) WaitForEviction(t testing.TB, pod *corev1.Pod, what string, cond func(*lifecyclev1alpha1.Eviction) error) *lifecyclev1alpha1.Eviction {
	t.Helper()
	client := f.Kube.LifecycleV1alpha1().Evictions(pod.Namespace)
	target := lifecycleutil.TargetKey(pod.Namespace, pod.UID)
	return watchUntil(t, what, func(ctx context.Context) ([]*lifecyclev1alpha1.Eviction, string, error) {
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		items := make([]*lifecyclev1alpha1.Eviction, 0, len(list.Items))
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
		return items, list.ResourceVersion, nil
	}, func(ctx context.Context, resourceVersion string) (watch.Interface, error) {
		return client.Watch(ctx, metav1.ListOptions{ResourceVersion: resourceVersion})
	}, func(ev *lifecyclev1alpha1.Eviction) bool {
		return lifecycleutil.EvictionTargetKey(ev) == target
	}, cond)
}

// WaitForLifecycleRequest watches the lifecycle.k8s.io EvictionRequest
// ns/name until it satisfies cond, and returns it.
func (f *Framework) WaitForLifecycleRequest(t testing.TB, ns, name, what string, cond func(*lifecyclev1alpha1.EvictionRequest) error) *lifecyclev1alpha1.EvictionRequest {
	t.Helper()
	client := f.Kube.LifecycleV1alpha1().EvictionRequests(ns)
	return watchUntil(t, what, func(ctx context.Context) ([]*lifecyclev1alpha1.EvictionRequest, string, error) {
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		items := make([]*lifecyclev1alpha1.EvictionRequest, 0, len(list.Items))
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
		return items, list.ResourceVersion, nil
	}, func(ctx context.Context, resourceVersion string) (watch.Interface, error) {
		return client.Watch(ctx, metav1.ListOptions{ResourceVersion: resourceVersion})
	}, func(er *lifecyclev1alpha1.EvictionRequest) bool { return er.Name == name }, cond)
}
