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
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

func TestCreateGetListUpdateDelete(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "web-0")
	client := f.EvictionRequests(ns)

	created := f.CreateEvictionRequest(t, pod, "nodemaintenance.k8s.io")
	if created.Spec.Type != v1alpha1.Soft || ptr.Deref(created.Spec.HeartbeatDeadlineSeconds, 0) != 1800 {
		t.Errorf("defaults: type %q, heartbeatDeadlineSeconds %v; want Soft and 1800", created.Spec.Type, created.Spec.HeartbeatDeadlineSeconds)
	}
	if ptr.Deref(created.Status.EvictionRequestCancellationPolicy, "") != v1alpha1.Allow || created.Generation != 1 {
		t.Errorf("created with cancellation policy %v and generation %d, want Allow and 1", created.Status.EvictionRequestCancellationPolicy, created.Generation)
	}

	got, err := client.Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created.Spec, got.Spec); diff != "" {
		t.Errorf("get returned another spec (-created +got):\n%s", diff)
	}
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != created.Name {
		t.Errorf("list returned %d items, want only %s", len(list.Items), created.Name)
	}

	updated, err := update(t, ns, created.Name, false, func(er *v1alpha1.EvictionRequest) {
		er.Spec.Requesters = append(er.Spec.Requesters, v1alpha1.Requester{Name: "descheduling.avalanche.io"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Generation != 2 || len(updated.Spec.Requesters) != 2 {
		t.Errorf("after adding a requester: generation %d and %d requesters, want 2 and 2", updated.Generation, len(updated.Spec.Requesters))
	}

	if err := client.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(ctx, created.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
}

func TestWatchFromResourceVersion(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	client := f.EvictionRequests(ns)
	first := f.CreateEvictionRequest(t, parkedPod(t, ns, "first"), "nodemaintenance.k8s.io")

	w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	second := f.CreateEvictionRequest(t, parkedPod(t, ns, "second"), "nodemaintenance.k8s.io")
	setStatus(t, ns, second.Name, func(er *v1alpha1.EvictionRequest) { er.Status.Message = "watched" })
	if err := client.Delete(ctx, second.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The controller may write the requests too; what the watch must show
	// is the creation, our status update and the deletion of the second
	// request, in that order, and nothing of the first from before.
	var seen []string
	timeout := time.After(time.Minute)
	for done := false; !done; {
		select {
		case e := <-w.ResultChan():
			er, ok := e.Object.(*v1alpha1.EvictionRequest)
			if !ok {
				t.Fatalf("watch event %s carries %T", e.Type, e.Object)
			}
			switch {
			case er.Name == first.Name:
				if e.Type == watch.Added {
					t.Errorf("the watch from resourceVersion %s replayed the creation of the first request", first.ResourceVersion)
				}
			case e.Type == watch.Added:
				seen = append(seen, "ADDED")
			case e.Type == watch.Modified && er.Status.Message == "watched" && !strings.HasSuffix(strings.Join(seen, ","), "watched"):
				seen = append(seen, "MODIFIED watched")
			case e.Type == watch.Deleted:
				seen = append(seen, "DELETED")
				done = true
			}
		case <-timeout:
			t.Fatalf("no DELETED event within a minute; saw %v", seen)
		}
	}
	if diff := cmp.Diff([]string{"ADDED", "MODIFIED watched", "DELETED"}, seen); diff != "" {
		t.Errorf("events of the second request (-want +got):\n%s", diff)
	}
}

func TestStatusSubresourceSemantics(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	created := f.CreateEvictionRequest(t, parkedPod(t, ns, "web-0"), "nodemaintenance.k8s.io")

	t.Run("the main resource ignores status", func(t *testing.T) {
		updated, err := update(t, ns, created.Name, false, func(er *v1alpha1.EvictionRequest) {
			er.Status.Message = "through the main resource"
			er.Spec.Requesters = append(er.Spec.Requesters, v1alpha1.Requester{Name: "descheduler.example.com"})
		})
		if err != nil {
			t.Fatal(err)
		}
		if updated.Status.Message == "through the main resource" {
			t.Errorf("an update of the main resource wrote status.message")
		}
		if len(updated.Spec.Requesters) != 2 {
			t.Errorf("the spec change was lost: %v", updated.Spec.Requesters)
		}
	})
	t.Run("status ignores spec and keeps the generation", func(t *testing.T) {
		updated := setStatus(t, ns, created.Name, func(er *v1alpha1.EvictionRequest) {
			er.Spec.Requesters = nil
			er.Status.Message = "through /status"
			er.Status.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second)))
		})
		if len(updated.Spec.Requesters) != 2 {
			t.Errorf("an update of /status changed spec.requesters to %v", updated.Spec.Requesters)
		}
		if updated.Status.Message != "through /status" || updated.Status.ExpectedInterceptorFinishTime == nil {
			t.Errorf("the status change was lost: %+v", updated.Status)
		}
		if updated.Generation != 2 {
			t.Errorf("generation %d after one spec change and a status change, want 2", updated.Generation)
		}
	})
}

func TestValidationRefusalsNameTheField(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "web-0")
	client := f.EvictionRequests(ns)

	createCases := map[string]struct {
		mutate func(er *v1alpha1.EvictionRequest)
		field  string
	}{
		"name is not the pod UID": {func(er *v1alpha1.EvictionRequest) { er.Name = "web-0" }, "metadata.name"},
		"generateName":            {func(er *v1alpha1.EvictionRequest) { er.Name, er.GenerateName = "", "evr-" }, "metadata.generateName"},
		"type Hard":               {func(er *v1alpha1.EvictionRequest) { er.Spec.Type = "Hard" }, "spec.type"},
		"no requester":            {func(er *v1alpha1.EvictionRequest) { er.Spec.Requesters = nil }, "spec.requesters"},
		"101 requesters": {func(er *v1alpha1.EvictionRequest) {
			er.Spec.Requesters = nil
			for i := 0; i <= 100; i++ {
				er.Spec.Requesters = append(er.Spec.Requesters, v1alpha1.Requester{Name: fmt.Sprintf("r%d.example.com", i)})
			}
		}, "spec.requesters"},
		"requester not a DNS subdomain": {func(er *v1alpha1.EvictionRequest) { er.Spec.Requesters[0].Name = "Node Drain" }, "spec.requesters[0].name"},
		"duplicate requester": {func(er *v1alpha1.EvictionRequest) {
			er.Spec.Requesters = append(er.Spec.Requesters, er.Spec.Requesters[0])
		}, "spec.requesters[1].name"},
		"deadline below 600":   {func(er *v1alpha1.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](599) }, "spec.heartbeatDeadlineSeconds"},
		"deadline above 86400": {func(er *v1alpha1.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](86401) }, "spec.heartbeatDeadlineSeconds"},
	}
	for name, tc := range createCases {
		t.Run("create/"+name, func(t *testing.T) {
			er := framework.NewEvictionRequest(pod, "nodemaintenance.k8s.io")
			tc.mutate(er)
			_, err := client.Create(ctx, er, metav1.CreateOptions{})
			if fields := invalidFields(t, err); !slices.Contains(fields, tc.field) {
				t.Errorf("422 names %v, want %s", fields, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("the message %q does not name %s", err.Error(), tc.field)
			}
		})
	}

	created := f.CreateEvictionRequest(t, pod, "nodemaintenance.k8s.io")
	updateCases := map[string]struct {
		status bool
		mutate func(er *v1alpha1.EvictionRequest)
		field  string
	}{
		"deadline is immutable": {false, func(er *v1alpha1.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](900) }, "spec.heartbeatDeadlineSeconds"},
		"target is immutable":   {false, func(er *v1alpha1.EvictionRequest) { er.Spec.Target.PodRef.Name = "web-1" }, "spec.target"},
		"message over 32768 bytes": {true, func(er *v1alpha1.EvictionRequest) {
			er.Status.Message = strings.Repeat("m", 32769)
		}, "status.message"},
		"heartbeat in the future": {true, func(er *v1alpha1.EvictionRequest) {
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(time.Now().Add(time.Hour)))
		}, "status.heartbeatTime"},
		"unknown cancellation policy": {true, func(er *v1alpha1.EvictionRequest) {
			er.Status.EvictionRequestCancellationPolicy = ptr.To[v1alpha1.EvictionRequestCancellationPolicy]("Sometimes")
		}, "status.evictionRequestCancellationPolicy"},
		"active interceptor off the list": {true, func(er *v1alpha1.EvictionRequest) {
			er.Status.ActiveInterceptorName = ptr.To("someone-else.example.com")
		}, "status.activeInterceptorName"},
		"negative failed evictions": {true, func(er *v1alpha1.EvictionRequest) {
			er.Status.PodEvictionStatus = &v1alpha1.PodEvictionStatus{FailedAPIEvictionCounter: -1}
		}, "status.podEvictionStatus.failedAPIEvictionCounter"},
	}
	for name, tc := range updateCases {
		t.Run("update/"+name, func(t *testing.T) {
			_, err := update(t, ns, created.Name, tc.status, tc.mutate)
			if fields := invalidFields(t, err); !slices.Contains(fields, tc.field) {
				t.Errorf("422 names %v, want %s", fields, tc.field)
			}
		})
	}

	t.Run("kubectl shows the field", func(t *testing.T) {
		manifest := fmt.Sprintf(`apiVersion: coordination.k8s.io/v1alpha1
kind: EvictionRequest
metadata: {name: %s, namespace: %s}
spec:
  target: {podRef: {name: %s, uid: %s}}
  requesters: [{name: nodemaintenance.k8s.io}]
  heartbeatDeadlineSeconds: 60
`, "another-"+pod.UID, ns, pod.Name, pod.UID)
		r := f.KubectlWithInput(t, manifest, "create", "-f", "-")
		if r.Err == nil {
			t.Fatalf("kubectl create accepted an invalid EvictionRequest")
		}
		for _, want := range []string{"is invalid", "metadata.name", "spec.heartbeatDeadlineSeconds"} {
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("kubectl error lacks %q: %s", want, r.Stderr)
			}
		}
	})
}
