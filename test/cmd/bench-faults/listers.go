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

package main

import (
	"context"
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
)

// listers are the kinds a campaign of f records: the namespace's pods,
// requests (and, on lifecycle.k8s.io, Evictions), budgets and Deployments,
// and every node.
func listers(f flavour, kube kubernetes.Interface, clientset versioned.Interface, ns string) []lister {
	pods, budgets, deployments := kube.CoreV1().Pods(ns), kube.PolicyV1().PodDisruptionBudgets(ns), kube.AppsV1().Deployments(ns)
	nodes := kube.CoreV1().Nodes()
	kinds := []lister{
		{history.KindPod, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) }, pods.Watch},
		{history.KindPodDisruptionBudget, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return budgets.List(ctx, o) }, budgets.Watch},
		{history.KindDeployment, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return deployments.List(ctx, o)
		}, deployments.Watch},
		{history.KindNode, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nodes.List(ctx, o) }, nodes.Watch},
	}
	if !f.lifecycle() {
		requests := clientset.CoordinationV1alpha1().EvictionRequests(ns)
		return append(kinds, lister{history.KindEvictionRequest, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return requests.List(ctx, o)
		}, requests.Watch})
	}
	requests, evictions := kube.LifecycleV1alpha1().EvictionRequests(ns), kube.LifecycleV1alpha1().Evictions(ns)
	return append(kinds,
		lister{history.KindLifecycleEvictionRequest, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return requests.List(ctx, o)
		}, requests.Watch},
		lister{history.KindEviction, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return evictions.List(ctx, o)
		}, evictions.Watch})
}

// labelPool puts every node in the campaign's pool: its Deployments run
// there, and the declarative drain drains at most two of it at once.
func labelPool(ctx context.Context, cluster *localcluster.Cluster, nodes []string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{poolLabel: namespace}}})
	for _, n := range nodes {
		if err := retry(ctxWithTimeout(ctx, time.Minute), func(ctx context.Context) error {
			_, err := cluster.Client.CoreV1().Nodes().Patch(ctx, n, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
