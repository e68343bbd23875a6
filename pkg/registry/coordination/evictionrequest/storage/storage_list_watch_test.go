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
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

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
