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

package localcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KarpenterNodePoolOptions shape a NodePool of NewKarpenterNodePool.
type KarpenterNodePoolOptions struct {
	// ConsolidateAfter is how long a node stays without pod changes before
	// Karpenter consolidates it (WhenEmptyOrUnderutilized); "Never" when
	// empty.
	ConsolidateAfter string
	// Budget is the nodes of its one disruption budget, a number or a
	// percentage; Karpenter's default, "10%", when empty.
	Budget string
	// TerminationGracePeriod is how long Karpenter drains a node it
	// disrupts before it deletes the pods left; none (for ever) when empty.
	TerminationGracePeriod string
	// Labels and Taints are those of its nodes.
	Labels map[string]string
	Taints []corev1.Taint
}

// NewKarpenterNodePool is a NodePool named name of the harness's
// KWOKNodeClass, on-demand, whose nodes never expire.
func NewKarpenterNodePool(name string, opts KarpenterNodePoolOptions) *unstructured.Unstructured {
	consolidateAfter := opts.ConsolidateAfter
	if consolidateAfter == "" {
		consolidateAfter = "Never"
	}
	budget := opts.Budget
	if budget == "" {
		budget = "10%"
	}
	var taints []any
	for _, t := range opts.Taints {
		taint := map[string]any{"key": t.Key, "effect": string(t.Effect)}
		if t.Value != "" {
			taint["value"] = t.Value
		}
		taints = append(taints, taint)
	}
	labels := map[string]any{}
	for k, v := range opts.Labels {
		labels[k] = v
	}
	spec := map[string]any{
		"nodeClassRef": map[string]any{"group": kwokNodeClassResource.Group, "kind": "KWOKNodeClass", "name": KarpenterNodeClass},
		"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}}},
		"expireAfter":  "Never",
	}
	if len(taints) > 0 {
		spec["taints"] = taints
	}
	if opts.TerminationGracePeriod != "" {
		spec["terminationGracePeriod"] = opts.TerminationGracePeriod
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": NodePoolResource.GroupVersion().String(),
		"kind":       "NodePool",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec},
			"disruption": map[string]any{
				"consolidationPolicy": "WhenEmptyOrUnderutilized",
				"consolidateAfter":    consolidateAfter,
				"budgets":             []any{map[string]any{"nodes": budget}},
			},
		},
	}}
}

// CreateKarpenterNodePool creates pool and waits until Karpenter reports it
// Ready, which it must be before Karpenter launches a node of it.
func (c *Cluster) CreateKarpenterNodePool(ctx context.Context, pool *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	pools := c.Dynamic.Resource(NodePoolResource)
	if _, err := pools.Create(callCtx, pool, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating NodePool %s: %w", pool.GetName(), err)
	}
	var created *unstructured.Unstructured
	err := pollUntil(ctx, "NodePool "+pool.GetName()+" Ready", func(ctx context.Context) error {
		got, err := pools.Get(ctx, pool.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		created = got
		return conditionTrue(got, "Ready")
	})
	return created, err
}
