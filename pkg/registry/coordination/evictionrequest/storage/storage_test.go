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
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

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
