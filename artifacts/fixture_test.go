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

package artifacts

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// testCerts stands in for every certificate file, each its own path.
var testCerts = func() map[string][]byte {
	files := map[string][]byte{}
	for _, name := range CertFiles {
		files[name] = []byte("placeholder " + name)
	}
	return files
}()

func render(t *testing.T, overlay string) []*unstructured.Unstructured {
	t.Helper()
	objects, err := Render(overlay, testCerts)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func find(objects []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, obj := range objects {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	return nil
}

func deployments(t *testing.T, objects []*unstructured.Unstructured) map[string]*appsv1.Deployment {
	t.Helper()
	found := map[string]*appsv1.Deployment{}
	for _, obj := range objects {
		if obj.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d); err != nil {
			t.Fatal(err)
		}
		found[d.Name] = &d
	}
	return found
}

func allows(rules []rbacv1.PolicyRule, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}
