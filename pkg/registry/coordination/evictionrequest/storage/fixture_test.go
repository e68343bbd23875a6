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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
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
	r, status, err := storage.NewREST(internalscheme.Scheme, registrytest.NewEtcdRESTOptions(t), clock)
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
