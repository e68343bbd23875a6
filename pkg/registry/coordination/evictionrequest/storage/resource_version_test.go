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
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
)

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
