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
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestStripMetadataKeeping(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:          "web-0",
		UID:           "uid-1",
		Labels:        map[string]string{"app": "web"},
		Annotations:   map[string]string{"note": "x", "kept": "y"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
	}, Spec: corev1.PodSpec{NodeName: "node-1"}}
	strip := StripMetadataKeeping("kept", "absent")
	got, err := strip(pod)
	if err != nil {
		t.Fatal(err)
	}
	stripped := got.(*corev1.Pod)
	if stripped.ManagedFields != nil || stripped.Labels != nil || len(stripped.Annotations) != 1 || stripped.Annotations["kept"] != "y" {
		t.Errorf("metadata after the transform: %+v; want only the annotation kept", stripped.ObjectMeta)
	}
	if stripped.Name != "web-0" || stripped.UID != "uid-1" || stripped.Spec.NodeName != "node-1" {
		t.Errorf("the rest of the object changed: %+v", stripped)
	}

	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/web-0", Obj: pod}
	if got, err := strip(tombstone); err != nil || got != any(tombstone) {
		t.Errorf("a tombstone came back as %v, %v; want it unchanged", got, err)
	}
}

func TestStripManagedFieldsKeepsLabels(t *testing.T) {
	ev := &lifecyclev1alpha1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "pod-1-web", Labels: map[string]string{"acme.io/drain": "requester"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "evictionrequest-controller"}}}}
	out, err := StripManagedFields(ev)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*lifecyclev1alpha1.Eviction)
	if len(got.ManagedFields) != 0 || got.Labels["acme.io/drain"] != "requester" {
		t.Errorf("StripManagedFields() = %+v, want no managedFields and the labels kept", got.ObjectMeta)
	}
}
