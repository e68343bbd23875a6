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
	"slices"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// WaitForRequest waits until the EvictionRequest ns/name satisfies cond and
// returns it.
func (f *Framework) WaitForRequest(t testing.TB, ns, name, what string, cond func(*v1alpha1.EvictionRequest) error) *v1alpha1.EvictionRequest {
	t.Helper()
	return WaitFor(t, what, func(ctx context.Context) (*v1alpha1.EvictionRequest, error) {
		return f.EvictionRequests(ns).Get(ctx, name, metav1.GetOptions{})
	}, cond)
}

// WaitForCompletion waits until the EvictionRequest ns/name is complete
// with one of reasons (any reason when none is given) and checks that the
// active interceptor's fields were cleared.
func (f *Framework) WaitForCompletion(t testing.TB, ns, name string, reasons ...string) *v1alpha1.EvictionRequest {
	t.Helper()
	er := f.WaitForRequest(t, ns, name, fmt.Sprintf("the request %s to complete with reason %v", name, reasons), func(er *v1alpha1.EvictionRequest) error {
		reason := coordinationutil.CompletionReason(er)
		switch {
		case reason == "":
			return fmt.Errorf("not complete: %s", er.Status.Message)
		case len(reasons) > 0 && !slices.Contains(reasons, reason):
			return fmt.Errorf("complete with reason %s (%s), want one of %v", reason, er.Status.Message, reasons)
		}
		return nil
	})
	if er.Status.ActiveInterceptorName != nil || er.Status.ActiveInterceptorCompleted || er.Status.ExpectedInterceptorFinishTime != nil {
		t.Errorf("the active interceptor fields survived completion: %+v", er.Status)
	}
	return er
}

// WaitUntilActive waits, as an interceptor learns that it is in charge,
// until the EvictionRequest ns/name is not complete and has interceptor as
// its active interceptor: it watches only the requests whose
// status.activeInterceptorName is that name.
func (f *Framework) WaitUntilActive(t testing.TB, ns, name, interceptor string) *v1alpha1.EvictionRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), DefaultTimeout)
	defer cancel()
	selector := fields.AndSelectors(
		fields.OneTermEqualSelector("metadata.name", name),
		fields.OneTermEqualSelector(v1alpha1.ActiveInterceptorNameField, interceptor),
	).String()
	for ctx.Err() == nil {
		list, err := f.EvictionRequests(ns).List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			t.Fatalf("listing as interceptor %s: %v", interceptor, err)
		}
		if len(list.Items) == 1 && !coordinationutil.IsComplete(&list.Items[0]) {
			return &list.Items[0]
		}
		if er := f.watchUntilActive(ctx, ns, selector, list.ResourceVersion); er != nil {
			return er
		}
	}
	current, _ := f.EvictionRequests(ns).Get(context.Background(), name, metav1.GetOptions{})
	t.Fatalf("interceptor %s never became active; the request is now %+v", interceptor, current.Status)
	return nil
}

// watchUntilActive watches the requests of selector from resourceVersion
// until one that is not complete shows up, or the watch ends.
func (f *Framework) watchUntilActive(ctx context.Context, ns, selector, resourceVersion string) *v1alpha1.EvictionRequest {
	w, err := f.EvictionRequests(ns).Watch(ctx, metav1.ListOptions{FieldSelector: selector, ResourceVersion: resourceVersion})
	if err != nil {
		return nil
	}
	defer w.Stop()
	for e := range w.ResultChan() {
		if er, ok := e.Object.(*v1alpha1.EvictionRequest); ok && e.Type != "DELETED" && !coordinationutil.IsComplete(er) {
			return er
		}
	}
	return nil
}

// RequestStatusesUntil watches er from its resourceVersion and returns the
// status of each version of it that changed the status, up to the first
// that satisfies done, at most DefaultTimeout: every write is seen, however
// soon the next one follows. A watch that ends before fails the test, as
// it may have missed versions.
func (f *Framework) RequestStatusesUntil(t testing.TB, er *v1alpha1.EvictionRequest, what string, done func(*v1alpha1.EvictionRequest) bool) []v1alpha1.EvictionRequestStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), DefaultTimeout)
	defer cancel()
	w, err := f.EvictionRequests(er.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", er.Name).String(), ResourceVersion: er.ResourceVersion,
	})
	if err != nil {
		t.Fatalf("watching %s for %s: %v", er.Name, what, err)
	}
	defer w.Stop()
	var statuses []v1alpha1.EvictionRequestStatus
	last := er.Status
	for e := range w.ResultChan() {
		version, ok := e.Object.(*v1alpha1.EvictionRequest)
		if !ok || e.Type == watch.Error || e.Type == watch.Deleted {
			t.Fatalf("watching %s for %s: %s %v; statuses so far %+v", er.Name, what, e.Type, e.Object, statuses)
		}
		if !apiequality.Semantic.DeepEqual(last, version.Status) {
			statuses = append(statuses, version.Status)
			last = version.Status
		}
		if done(version) {
			return statuses
		}
	}
	t.Fatalf("waiting for %s: the watch ended (%v); statuses so far %+v", what, ctx.Err(), statuses)
	return nil
}
