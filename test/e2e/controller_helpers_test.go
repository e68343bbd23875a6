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
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// controllerTimeout bounds how long the tests wait for the controller; its
// eviction backoff is the longest of its waits in these flows.
const controllerTimeout = 2 * time.Minute

// waitForRequest waits until the EvictionRequest satisfies cond and returns it.
func waitForRequest(t *testing.T, ns, name, what string, cond func(*v1alpha1.EvictionRequest) error) *v1alpha1.EvictionRequest {
	t.Helper()
	var er *v1alpha1.EvictionRequest
	framework.Eventually(t, controllerTimeout, what, func(ctx context.Context) error {
		current, err := f.EvictionRequests(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		er = current
		return cond(current)
	})
	return er
}

// waitUntilActive is how an interceptor learns that it is in charge: it
// watches only the requests whose status.activeInterceptorName is its own
// name, and acts on one that is not complete.
func waitUntilActive(t *testing.T, ns, name, interceptor string) *v1alpha1.EvictionRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(framework.Context(t), controllerTimeout)
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
		if len(list.Items) == 1 && !isComplete(&list.Items[0]) {
			return &list.Items[0]
		}
		w, err := f.EvictionRequests(ns).Watch(ctx, metav1.ListOptions{FieldSelector: selector, ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatalf("watching as interceptor %s: %v", interceptor, err)
		}
		for e := range w.ResultChan() {
			if er, ok := e.Object.(*v1alpha1.EvictionRequest); ok && e.Type != "DELETED" && !isComplete(er) {
				w.Stop()
				return er
			}
		}
	}
	current, _ := f.EvictionRequests(ns).Get(context.Background(), name, metav1.GetOptions{})
	t.Fatalf("interceptor %s never became active; the request is now %+v", interceptor, current.Status)
	return nil
}

func isComplete(er *v1alpha1.EvictionRequest) bool {
	return apimeta.IsStatusConditionTrue(er.Status.Conditions, string(v1alpha1.EvictionRequestComplete))
}

// waitForCompletion waits for Complete=True with one of the given reasons
// and checks that the active interceptor fields are cleared.
func waitForCompletion(t *testing.T, ns, name string, reasons ...string) *v1alpha1.EvictionRequest {
	t.Helper()
	er := waitForRequest(t, ns, name, fmt.Sprintf("Complete with reason %v", reasons), func(er *v1alpha1.EvictionRequest) error {
		c := apimeta.FindStatusCondition(er.Status.Conditions, string(v1alpha1.EvictionRequestComplete))
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not complete: %s", er.Status.Message)
		}
		if !slices.Contains(reasons, c.Reason) {
			return fmt.Errorf("complete with reason %s (%s), want one of %v", c.Reason, c.Message, reasons)
		}
		return nil
	})
	if er.Status.ActiveInterceptorName != nil || er.Status.ActiveInterceptorCompleted || er.Status.ExpectedInterceptorFinishTime != nil {
		t.Errorf("the active interceptor fields survived completion: %+v", er.Status)
	}
	return er
}

// waitForPodGone waits until the pod with uid no longer exists.
func waitForPodGone(t *testing.T, ns, name string) {
	t.Helper()
	framework.Eventually(t, controllerTimeout, "pod "+name+" to be gone", func(ctx context.Context) error {
		_, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("pod still there: %v", err)
	})
}

// eventReasons lists the reasons of the events recorded on an object, oldest first.
func eventReasons(t *testing.T, ns, name string) []string {
	t.Helper()
	return eventReasonsOf(t, ns, "", name)
}

// eventReasonsOf lists the reasons of the events recorded on an object of
// kind (any kind when empty), oldest first.
func eventReasonsOf(t *testing.T, ns, kind, name string) []string {
	t.Helper()
	var reasons []string
	for _, e := range events(t, ns, kind, name) {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}

// eventMessages joins the messages of the events with reason on an object.
func eventMessages(t *testing.T, ns, name, reason string) string {
	t.Helper()
	var messages []string
	for _, e := range events(t, ns, "", name) {
		if e.Reason == reason {
			messages = append(messages, e.Message)
		}
	}
	return strings.Join(messages, "\n")
}

func events(t *testing.T, ns, kind, name string) []corev1.Event {
	t.Helper()
	selector := fields.OneTermEqualSelector("involvedObject.name", name)
	if kind != "" {
		selector = fields.AndSelectors(selector, fields.OneTermEqualSelector("involvedObject.kind", kind))
	}
	list, err := f.Kube.CoreV1().Events(ns).List(framework.Context(t), metav1.ListOptions{FieldSelector: selector.String()})
	if err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		return list.Items[i].FirstTimestamp.Before(&list.Items[j].FirstTimestamp)
	})
	return list.Items
}

// waitForEvents waits until the object has events with all the reasons.
func waitForEvents(t *testing.T, ns, name string, reasons ...string) {
	t.Helper()
	framework.Eventually(t, controllerTimeout, fmt.Sprintf("events %v on %s", reasons, name), func(ctx context.Context) error {
		got := map[string]bool{}
		for _, r := range eventReasons(t, ns, name) {
			got[r] = true
		}
		for _, r := range reasons {
			if !got[r] {
				return fmt.Errorf("no %s event yet", r)
			}
		}
		return nil
	})
}
