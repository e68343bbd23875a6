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

package framework

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// NewNode creates a node of its own for the test, managed by kwok (Ready,
// running its pods), and deletes it when the test ends. Tests that drain or
// shut down a node use one so that they touch no other test's pods.
func (f *Framework) NewNode(t testing.TB) string {
	t.Helper()
	ctx := t.Context()
	capacity := corev1.ResourceList{
		corev1.ResourcePods:   resource.MustParse("110"),
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("64Gi"),
	}
	node, err := f.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-node-", Labels: map[string]string{localcluster.KwokNodeLabel: "fake"}},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a node: %v", err)
	}
	t.Cleanup(func() { _ = f.Kube.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	Eventually(t, time.Minute, "kwok to make node "+node.Name+" Ready", func(ctx context.Context) error {
		current, err := f.Kube.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range current.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Ready: %v", current.Status.Conditions)
	})
	return node.Name
}

// MarkForDrain sets or removes the annotation that asks the server's node
// drain to drain node, with the one that lets it evict pods that declare
// no controller, as the suite's pods are.
func (f *Framework) MarkForDrain(t testing.TB, node string, drain bool) {
	t.Helper()
	var value any
	if drain {
		value = "true"
	}
	// The suite's pods declare no controller: the drain may evict them.
	f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		nodedrain.DrainAnnotation: value, nodedrain.ForceAnnotation: value}}})
}
