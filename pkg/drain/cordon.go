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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// CordonedByAnnotation records on a Node who cordoned it on behalf of a
// drain, so that only that drain uncordons it: a node an admin cordoned
// stays cordoned when the drain ends.
const CordonedByAnnotation = "evictionrequest.coordination.k8s.io/cordoned-by"

// Cordon marks node unschedulable, as kubectl cordon does, and reports
// whether it changed the node. When by is not empty the node also records
// by in the CordonedByAnnotation annotation, only if this call is what
// cordons it; that write carries the node's resourceVersion, so a node an
// admin cordoned meanwhile fails with a conflict rather than being claimed.
func Cordon(ctx context.Context, nodes corev1client.NodesGetter, node *corev1.Node, by string, opts metav1.PatchOptions) (bool, error) {
	if node.Spec.Unschedulable {
		return false, nil
	}
	patch := map[string]any{"spec": map[string]any{"unschedulable": true}}
	if by != "" {
		patch["metadata"] = map[string]any{
			"resourceVersion": node.ResourceVersion,
			"annotations":     map[string]any{CordonedByAnnotation: by},
		}
	}
	return true, patchNode(ctx, nodes, node.Name, patch, opts)
}

// Uncordon makes node schedulable again if by cordoned it, as the
// CordonedByAnnotation annotation records, and removes the annotation.
// It reports whether it changed the node; a node cordoned by anyone else is
// left as it is.
func Uncordon(ctx context.Context, nodes corev1client.NodesGetter, node *corev1.Node, by string, opts metav1.PatchOptions) (bool, error) {
	if node.Annotations[CordonedByAnnotation] != by {
		return false, nil
	}
	patch := map[string]any{
		"metadata": map[string]any{
			"resourceVersion": node.ResourceVersion,
			"annotations":     map[string]any{CordonedByAnnotation: nil},
		},
		"spec": map[string]any{"unschedulable": nil},
	}
	return true, patchNode(ctx, nodes, node.Name, patch, opts)
}

func patchNode(ctx context.Context, nodes corev1client.NodesGetter, name string, patch map[string]any, opts metav1.PatchOptions) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = nodes.Nodes().Patch(ctx, name, types.MergePatchType, data, opts)
	return err
}
