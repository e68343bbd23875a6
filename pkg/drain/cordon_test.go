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

package drain

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// patches records the merge patches the fake clientset receives for nodes.
func patches(client *fake.Clientset) *[]map[string]any {
	var seen []map[string]any
	client.PrependReactor("patch", "nodes", func(action clienttesting.Action) (bool, runtime.Object, error) {
		var patch map[string]any
		_ = json.Unmarshal(action.(clienttesting.PatchAction).GetPatch(), &patch)
		seen = append(seen, patch)
		return false, nil, nil
	})
	return &seen
}

func TestCordon(t *testing.T) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "7"}}
	for _, tc := range []struct {
		name        string
		unschedule  bool
		by          string
		wantChanged bool
		wantPatch   []map[string]any
	}{
		{"as kubectl cordon does", false, "", true, []map[string]any{{"spec": map[string]any{"unschedulable": true}}}},
		{"claimed by a drain, guarded by the resourceVersion", false, "me", true, []map[string]any{{
			"spec":     map[string]any{"unschedulable": true},
			"metadata": map[string]any{"resourceVersion": "7", "annotations": map[string]any{CordonedByAnnotation: "me"}},
		}}},
		{"a node cordoned already is left alone", true, "me", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := node.DeepCopy()
			n.Spec.Unschedulable = tc.unschedule
			client := fake.NewClientset(n)
			seen := patches(client)
			changed, err := Cordon(ctx, client.CoreV1(), n, tc.by, metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.wantChanged {
				t.Errorf("Cordon() = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.wantPatch, *seen); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUncordonOnlyWhatTheDrainCordoned(t *testing.T) {
	ctx := context.Background()
	mine := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "mine", ResourceVersion: "9", Annotations: map[string]string{CordonedByAnnotation: "me"}},
		Spec: corev1.NodeSpec{Unschedulable: true}}
	admins := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "admins"}, Spec: corev1.NodeSpec{Unschedulable: true}}
	client := fake.NewClientset(mine, admins)
	seen := patches(client)

	if changed, err := Uncordon(ctx, client.CoreV1(), admins, "me", metav1.PatchOptions{}); err != nil || changed {
		t.Errorf("Uncordon() of a node an admin cordoned = %v, %v; want it left alone", changed, err)
	}
	if changed, err := Uncordon(ctx, client.CoreV1(), mine, "me", metav1.PatchOptions{}); err != nil || !changed {
		t.Fatalf("Uncordon() of the drain's node = %v, %v", changed, err)
	}
	want := []map[string]any{{
		"spec":     map[string]any{"unschedulable": nil},
		"metadata": map[string]any{"resourceVersion": "9", "annotations": map[string]any{CordonedByAnnotation: nil}},
	}}
	if diff := cmp.Diff(want, *seen); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
	got, err := client.CoreV1().Nodes().Get(ctx, "mine", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Unschedulable || got.Annotations[CordonedByAnnotation] != "" {
		t.Errorf("after Uncordon(): unschedulable %v, annotations %v", got.Spec.Unschedulable, got.Annotations)
	}
}
