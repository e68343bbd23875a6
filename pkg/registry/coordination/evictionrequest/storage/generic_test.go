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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// newGenericTester returns k8s.io/apiserver's registry tester, the suite
// kube-apiserver's own registries pass, on our store. The tester names its
// objects itself (foo, foo1, ...) while our rules want the name to be the pod's UID, so a
// copy of the store points each new object's podRef at its name before our
// strategy runs; everything else is the store the server serves.
func newGenericTester(t *testing.T) *genericregistrytest.Tester {
	s := newStorage(t)
	store := *s.rest.Store
	store.BeginCreate = func(_ context.Context, obj runtime.Object, _ *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
		er := obj.(*coordination.EvictionRequest)
		if er.Spec.Target.PodRef != nil && er.Name != "" {
			er.Spec.Target.PodRef.UID = er.Name
		}
		return func(context.Context, bool) {}, nil
	}
	// GeneratesName skips the tester's generateName case: our rules refuse
	// generateName (TestCreateRefusesGenerateName).
	return genericregistrytest.New(t, &store).GeneratesName()
}

func validEvictionRequest() *coordination.EvictionRequest {
	er := newEvictionRequest(0)
	// The tester's own names (foo, foo1, ...) in its own namespace.
	er.Name, er.Namespace = "foo", ""
	return er
}

func TestGenericCreate(t *testing.T) {
	noRequesters := validEvictionRequest()
	noRequesters.Spec.Requesters = nil
	noTarget := validEvictionRequest()
	noTarget.Spec.Target.PodRef = nil
	badInterceptor := validEvictionRequest()
	badInterceptor.Spec.Interceptors = []coordination.Interceptor{{Name: "Not A Name"}}
	newGenericTester(t).TestCreate(validEvictionRequest(), noRequesters, noTarget, badInterceptor)
}

func TestGenericUpdate(t *testing.T) {
	newGenericTester(t).TestUpdate(validEvictionRequest(),
		func(obj runtime.Object) runtime.Object {
			er := obj.(*coordination.EvictionRequest)
			er.Spec.Requesters = append(er.Spec.Requesters, coordination.Requester{Name: "descheduler.example.com"})
			return er
		},
		func(obj runtime.Object) runtime.Object {
			er := obj.(*coordination.EvictionRequest)
			er.Spec.Interceptors = nil
			return er
		},
		func(obj runtime.Object) runtime.Object {
			er := obj.(*coordination.EvictionRequest)
			er.Spec.Target.PodRef.Name = "another-pod"
			return er
		},
	)
}

func TestGenericDelete(t *testing.T) {
	newGenericTester(t).TestDelete(validEvictionRequest())
}

func TestGenericGet(t *testing.T) {
	newGenericTester(t).TestGet(validEvictionRequest())
}

func TestGenericList(t *testing.T) {
	newGenericTester(t).TestList(validEvictionRequest())
}

func TestGenericWatch(t *testing.T) {
	newGenericTester(t).TestWatch(validEvictionRequest(),
		[]labels.Set{{"app": "app-0"}},
		[]labels.Set{{"app": "another-app"}},
		[]fields.Set{
			{"metadata.name": "foo"},
			{v1alpha1.PodNameField: "pod-0"},
		},
		[]fields.Set{
			{"metadata.name": "another-name"},
			{v1alpha1.PodNameField: "another-pod"},
			{v1alpha1.ActiveInterceptorNameField: "a.example.com"},
		},
	)
}
