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

package cachetransform

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestStripManagedFields(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:          "web-0",
		Annotations:   map[string]string{"keep": "me"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
	}}
	got, err := StripManagedFields(pod)
	if err != nil {
		t.Fatal(err)
	}
	stripped := got.(*corev1.Pod)
	if stripped.ManagedFields != nil {
		t.Errorf("managedFields kept: %v", stripped.ManagedFields)
	}
	if stripped.Name != "web-0" || stripped.Annotations["keep"] != "me" {
		t.Errorf("the rest of the metadata changed: %+v", stripped.ObjectMeta)
	}

	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/web-0", Obj: pod}
	if got, err := StripManagedFields(tombstone); err != nil || got != any(tombstone) {
		t.Errorf("a tombstone came back as %v, %v; want it unchanged", got, err)
	}
}
