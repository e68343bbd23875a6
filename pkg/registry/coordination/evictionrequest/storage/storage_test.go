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

package storage_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/registry/coordination/evictionrequest/storage"
	"github.com/evictionrequest/apiserver/pkg/registry/registrytest"
)

const namespace = "default"

type testStorage struct {
	rest   *storage.REST
	status *storage.StatusREST
	clock  *testingclock.FakePassiveClock
}

// newStorage returns the storage of the server on a real etcd started for the test.
func newStorage(t *testing.T) *testStorage {
	t.Helper()
	clock := testingclock.NewFakePassiveClock(time.Now())
	r, status, err := storage.NewREST(apiserver.Scheme, registrytest.NewEtcdRESTOptions(t), clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Destroy)
	return &testStorage{rest: r, status: status, clock: clock}
}

func nsContext() context.Context {
	return genericapirequest.WithNamespace(context.Background(), namespace)
}

func podUID(i int) string {
	return fmt.Sprintf("6a0c3d1e-0000-4000-8000-%012d", i)
}

func newEvictionRequest(i int) *coordination.EvictionRequest {
	return &coordination.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Name: podUID(i), Namespace: namespace, Labels: map[string]string{"app": fmt.Sprintf("app-%d", i)}},
		Spec: coordination.EvictionRequestSpec{
			Type:                     coordination.Soft,
			Target:                   coordination.EvictionTarget{PodRef: &coordination.LocalPodReference{Name: fmt.Sprintf("pod-%d", i), UID: podUID(i)}},
			Requesters:               []coordination.Requester{{Name: "nodemaintenance.k8s.io"}},
			Interceptors:             []coordination.Interceptor{{Name: "a.example.com"}, {Name: "b.example.com"}},
			HeartbeatDeadlineSeconds: ptr.To[int32](600),
		},
	}
}

func (s *testStorage) create(t *testing.T, er *coordination.EvictionRequest) *coordination.EvictionRequest {
	t.Helper()
	obj, err := s.rest.Create(nsContext(), er, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s: %v", er.Name, err)
	}
	return obj.(*coordination.EvictionRequest)
}

func (s *testStorage) get(t *testing.T, name string) *coordination.EvictionRequest {
	t.Helper()
	obj, err := s.rest.Get(nsContext(), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting %s: %v", name, err)
	}
	return obj.(*coordination.EvictionRequest)
}

func (s *testStorage) update(er *coordination.EvictionRequest) (*coordination.EvictionRequest, error) {
	obj, _, err := s.rest.Update(nsContext(), er.Name, rest.DefaultUpdatedObjectInfo(er), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*coordination.EvictionRequest), nil
}

func (s *testStorage) updateStatus(er *coordination.EvictionRequest) (*coordination.EvictionRequest, error) {
	obj, _, err := s.status.Update(nsContext(), er.Name, rest.DefaultUpdatedObjectInfo(er), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*coordination.EvictionRequest), nil
}

// expectInvalid fails unless err is a 422 naming exactly the given fields.
func expectInvalid(t *testing.T, err error, fields ...string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got error %v, want Invalid", err)
	}
	var got []string
	for _, cause := range err.(apierrors.APIStatus).Status().Details.Causes {
		got = append(got, cause.Field)
	}
	if diff := cmp.Diff(fields, got); diff != "" {
		t.Errorf("invalid fields (-want +got):\n%s\nerror: %v", diff, err)
	}
}

func TestCreateClearsStatusAndStoresTheObject(t *testing.T) {
	s := newStorage(t)
	er := newEvictionRequest(1)
	er.Status = coordination.EvictionRequestStatus{
		ActiveInterceptorName:             ptr.To("b.example.com"),
		EvictionRequestCancellationPolicy: ptr.To(coordination.Forbid),
		PodEvictionStatus:                 &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 9},
		Message:                           "set by a client",
	}
	created := s.create(t, er)

	wantStatus := coordination.EvictionRequestStatus{EvictionRequestCancellationPolicy: ptr.To(coordination.Allow)}
	if diff := cmp.Diff(wantStatus, created.Status); diff != "" {
		t.Errorf("status after create (-want +got):\n%s", diff)
	}
	if created.Generation != 1 || created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Errorf("create did not fill the system metadata: %+v", created.ObjectMeta)
	}
	stored := s.get(t, er.Name)
	if diff := cmp.Diff(created, stored); diff != "" {
		t.Errorf("stored object differs from the created one (-created +stored):\n%s", diff)
	}
}

func TestCreateRefusesInvalidObjectsAndWritesNothing(t *testing.T) {
	cases := map[string]struct {
		mutate func(er *coordination.EvictionRequest)
		fields []string
	}{
		"name is not the pod UID": {
			mutate: func(er *coordination.EvictionRequest) { er.Name = "pod-1" },
			fields: []string{"metadata.name"},
		},
		"no requester": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = nil },
			fields: []string{"spec.requesters"},
		},
		"deadline out of range": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](60) },
			fields: []string{"spec.heartbeatDeadlineSeconds"},
		},
	}
	s := newStorage(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			er := newEvictionRequest(1)
			tc.mutate(er)
			_, err := s.rest.Create(nsContext(), er, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			expectInvalid(t, err, tc.fields...)
			if _, err := s.rest.Get(nsContext(), er.Name, &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("after a refused create, get returned %v, want NotFound", err)
			}
		})
	}
}

func TestCreateRefusesGenerateName(t *testing.T) {
	s := newStorage(t)
	er := newEvictionRequest(1)
	er.Name, er.GenerateName = "", "evr-"
	_, err := s.rest.Create(nsContext(), er, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	expectInvalid(t, err, "metadata.generateName", "metadata.name")
}

func TestCreateRefusesASecondRequestForThePod(t *testing.T) {
	s := newStorage(t)
	s.create(t, newEvictionRequest(1))
	_, err := s.rest.Create(nsContext(), newEvictionRequest(1), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: got %v, want AlreadyExists", err)
	}
}

func TestListWithLabelAndFieldSelectors(t *testing.T) {
	s := newStorage(t)
	for i := 1; i <= 3; i++ {
		s.create(t, newEvictionRequest(i))
	}
	active := s.get(t, podUID(2))
	active.Status.ActiveInterceptorName = ptr.To("b.example.com")
	if _, err := s.updateStatus(active); err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		labels string
		fields string
		want   []string
	}{
		"everything":               {want: []string{podUID(1), podUID(2), podUID(3)}},
		"label":                    {labels: "app=app-3", want: []string{podUID(3)}},
		"pod name":                 {fields: "spec.target.podRef.name=pod-1", want: []string{podUID(1)}},
		"pod uid":                  {fields: "spec.target.podRef.uid=" + podUID(3), want: []string{podUID(3)}},
		"active interceptor":       {fields: "status.activeInterceptorName=b.example.com", want: []string{podUID(2)}},
		"no active interceptor":    {fields: "status.activeInterceptorName=", want: []string{podUID(1), podUID(3)}},
		"unknown active":           {fields: "status.activeInterceptorName=a.example.com", want: []string{}},
		"metadata.name":            {fields: "metadata.name=" + podUID(1), want: []string{podUID(1)}},
		"pod name and active name": {fields: "spec.target.podRef.name=pod-2,status.activeInterceptorName=b.example.com", want: []string{podUID(2)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			options := &metainternalversion.ListOptions{LabelSelector: labels.Everything(), FieldSelector: fields.Everything()}
			if tc.labels != "" {
				options.LabelSelector = labels.SelectorFromSet(labels.Set(mustParseSet(t, tc.labels)))
			}
			if tc.fields != "" {
				selector, err := fields.ParseSelector(tc.fields)
				if err != nil {
					t.Fatal(err)
				}
				options.FieldSelector = selector
			}
			obj, err := s.rest.List(nsContext(), options)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, item := range obj.(*coordination.EvictionRequestList).Items {
				got = append(got, item.Name)
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}
		})
	}
}

func mustParseSet(t *testing.T, selector string) map[string]string {
	t.Helper()
	set, err := labels.ConvertSelectorToLabelsMap(selector)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

type event struct {
	Type watch.EventType
	Name string
}

func nextEvents(t *testing.T, w watch.Interface, n int) []event {
	t.Helper()
	var got []event
	timeout := time.After(30 * time.Second)
	for len(got) < n {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v", got)
			}
			got = append(got, event{Type: e.Type, Name: e.Object.(*coordination.EvictionRequest).Name})
		case <-timeout:
			t.Fatalf("timed out after events %v, want %d", got, n)
		}
	}
	return got
}

func TestWatchFromResourceVersion(t *testing.T) {
	s := newStorage(t)
	first := s.create(t, newEvictionRequest(1))

	w, err := s.rest.Watch(nsContext(), &metainternalversion.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	second := s.create(t, newEvictionRequest(2))
	second.Status.Message = "interceptor b is working"
	if _, err := s.updateStatus(second); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.rest.Delete(nsContext(), second.Name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	want := []event{{watch.Added, podUID(2)}, {watch.Modified, podUID(2)}, {watch.Deleted, podUID(2)}}
	if diff := cmp.Diff(want, nextEvents(t, w, 3)); diff != "" {
		t.Errorf("events after resourceVersion %s (-want +got):\n%s", first.ResourceVersion, diff)
	}
}

func TestWatchWithActiveInterceptorFieldSelector(t *testing.T) {
	s := newStorage(t)
	er := s.create(t, newEvictionRequest(1))
	s.create(t, newEvictionRequest(2))

	w, err := s.rest.Watch(nsContext(), &metainternalversion.ListOptions{
		ResourceVersion: er.ResourceVersion,
		FieldSelector:   fields.OneTermEqualSelector("status.activeInterceptorName", "b.example.com"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// b becomes active, then completes and hands over to a: the watch of b
	// sees the request arrive and leave.
	er.Status.ActiveInterceptorName = ptr.To("b.example.com")
	er.Status.ActiveInterceptorCompleted = true
	if er, err = s.updateStatus(er); err != nil {
		t.Fatal(err)
	}
	er.Status.ActiveInterceptorName = ptr.To("a.example.com")
	er.Status.ActiveInterceptorCompleted = false
	if _, err = s.updateStatus(er); err != nil {
		t.Fatal(err)
	}

	want := []event{{watch.Added, podUID(1)}, {watch.Deleted, podUID(1)}}
	if diff := cmp.Diff(want, nextEvents(t, w, 2)); diff != "" {
		t.Errorf("events of b's watch (-want +got):\n%s", diff)
	}
}

func TestUpdate(t *testing.T) {
	s := newStorage(t)
	created := s.create(t, newEvictionRequest(1))

	t.Run("spec change bumps the generation and ignores status", func(t *testing.T) {
		er := created.DeepCopy()
		er.Spec.Requesters = append(er.Spec.Requesters, coordination.Requester{Name: "descheduler.example.com"})
		er.Status.Message = "a status write through the main resource"
		updated, err := s.update(er)
		if err != nil {
			t.Fatal(err)
		}
		if updated.Generation != 2 {
			t.Errorf("generation = %d, want 2", updated.Generation)
		}
		if updated.Status.Message != "" {
			t.Errorf("the main resource wrote status.message %q", updated.Status.Message)
		}
		if len(s.get(t, er.Name).Spec.Requesters) != 2 {
			t.Errorf("requester not stored")
		}
	})
	t.Run("immutable fields are refused", func(t *testing.T) {
		er := s.get(t, created.Name)
		er.Spec.Interceptors = nil
		er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](1200)
		_, err := s.update(er)
		expectInvalid(t, err, "spec.interceptors", "spec.heartbeatDeadlineSeconds")
	})
	t.Run("an update must name a resourceVersion", func(t *testing.T) {
		er := s.get(t, created.Name)
		er.ResourceVersion = ""
		_, err := s.update(er)
		expectInvalid(t, err, "metadata.resourceVersion")
	})
}

func TestStatusUpdate(t *testing.T) {
	s := newStorage(t)
	created := s.create(t, newEvictionRequest(1))

	er := created.DeepCopy()
	er.Spec.Requesters = nil
	er.Status.ActiveInterceptorName = ptr.To("b.example.com")
	er.Status.HeartbeatTime = &metav1.Time{Time: s.clock.Now().Truncate(time.Second)}
	er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Forbid)
	updated, err := s.updateStatus(er)
	if err != nil {
		t.Fatal(err)
	}
	if len(updated.Spec.Requesters) != 1 {
		t.Errorf("/status changed the spec: %+v", updated.Spec.Requesters)
	}
	if updated.Generation != 1 {
		t.Errorf("/status changed the generation to %d", updated.Generation)
	}
	stored := s.get(t, er.Name)
	if diff := cmp.Diff(er.Status, stored.Status); diff != "" {
		t.Errorf("stored status (-written +stored):\n%s", diff)
	}

	t.Run("hand-off before the deadline is refused", func(t *testing.T) {
		er := s.get(t, created.Name)
		er.Status.ActiveInterceptorName = ptr.To("a.example.com")
		_, err := s.updateStatus(er)
		expectInvalid(t, err, "status.activeInterceptorName")
	})
	t.Run("hand-off after the deadline is accepted", func(t *testing.T) {
		s.clock.SetTime(s.clock.Now().Add(601 * time.Second))
		er := s.get(t, created.Name)
		er.Status.ActiveInterceptorName = ptr.To("a.example.com")
		er.Status.HeartbeatTime = &metav1.Time{Time: s.clock.Now().Truncate(time.Second)}
		if _, err := s.updateStatus(er); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the failed eviction counter cannot go down", func(t *testing.T) {
		er := s.get(t, created.Name)
		er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 3}
		er, err := s.updateStatus(er)
		if err != nil {
			t.Fatal(err)
		}
		er.Status.PodEvictionStatus.FailedAPIEvictionCounter = 1
		_, err = s.updateStatus(er)
		expectInvalid(t, err, "status.podEvictionStatus.failedAPIEvictionCounter")
	})
}

func TestMalformedResourceVersionIsABadRequest(t *testing.T) {
	s := newStorage(t)
	created := s.create(t, newEvictionRequest(1))
	for name, call := range map[string]func() error{
		"get": func() error {
			_, err := s.rest.Get(nsContext(), created.Name, &metav1.GetOptions{ResourceVersion: "abc"})
			return err
		},
		"get status": func() error {
			_, err := s.status.Get(nsContext(), created.Name, &metav1.GetOptions{ResourceVersion: "abc"})
			return err
		},
		"list": func() error {
			_, err := s.rest.List(nsContext(), &metainternalversion.ListOptions{ResourceVersion: "abc"})
			return err
		},
		"watch": func() error {
			_, err := s.rest.Watch(nsContext(), &metainternalversion.ListOptions{ResourceVersion: "abc"})
			return err
		},
		"delete collection": func() error {
			_, err := s.rest.DeleteCollection(nsContext(), rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{ResourceVersion: "abc"})
			return err
		},
	} {
		if err := call(); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "resourceVersion") {
			t.Errorf("%s with resourceVersion abc: got %v, want 400 naming resourceVersion", name, err)
		}
	}
	if _, err := s.rest.Get(nsContext(), created.Name, &metav1.GetOptions{ResourceVersion: created.ResourceVersion}); err != nil {
		t.Errorf("get at its own resourceVersion: %v", err)
	}
}

func TestCreateRefusesAResourceVersion(t *testing.T) {
	s := newStorage(t)
	er := newEvictionRequest(1)
	er.ResourceVersion = "42"
	_, err := s.rest.Create(nsContext(), er, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	expectInvalid(t, err, "metadata.resourceVersion")
}
