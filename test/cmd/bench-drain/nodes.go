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
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// prepareNode creates a node and a namespace named after name, and fills
// the node with o.pods pods of the case; cleanup deletes both.
func prepareNode(ctx context.Context, cluster *localcluster.Cluster, o options, name string, c drainCase) (node, ns string, cleanup func(), err error) {
	client := cluster.Client
	var undo []func()
	cleanup = func() {
		for _, f := range slices.Backward(undo) {
			f()
		}
	}
	created, err := client.CoreV1().Nodes().Create(ctx, benchNode(name), metav1.CreateOptions{})
	if err != nil {
		return "", "", cleanup, err
	}
	undo = append(undo, func() {
		// Sent even when the run was interrupted, but bounded.
		deleteCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = client.CoreV1().Nodes().Delete(deleteCtx, created.Name, metav1.DeleteOptions{})
	})
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if c.optIn {
		namespace.Labels = map[string]string{bridge.NamespaceLabel: bridge.NamespaceOptIn}
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, namespace, metav1.CreateOptions{}); err != nil {
		return "", "", cleanup, err
	}
	undo = append(undo, func() { benchutil.DeleteNamespace(ctx, client, name) })
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return "", "", cleanup, fmt.Errorf("the default service account of %s: %w", name, err)
	}
	var mutate func(*corev1.Pod)
	if c.intercepted {
		mutate = declareSampleInterceptor(o.api)
	}
	_, err = fillNode(ctx, client, name, created.Name, o.pods, mutate)
	return created.Name, name, cleanup, err
}

// fillNode creates n running pods on node in ns, changed by mutate, and
// returns them once kwok runs them all.
func fillNode(ctx context.Context, client kubernetes.Interface, ns, node string, n int, mutate func(*corev1.Pod)) ([]*corev1.Pod, error) {
	pods := make([]*corev1.Pod, n)
	var createErr error
	workqueue.ParallelizeUntil(ctx, 16, n, func(i int) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: ns},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if mutate != nil {
			mutate(pod)
		}
		created, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			createErr = err
			return
		}
		pods[i] = created
	})
	if createErr != nil {
		return nil, createErr
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		running := 0
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n, nil
	}); err != nil {
		return nil, fmt.Errorf("waiting for %d pods to run: %w", n, err)
	}
	return pods, nil
}

func benchNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourcePods:   resource.MustParse("1000"),
		corev1.ResourceCPU:    resource.MustParse("256"),
		corev1.ResourceMemory: resource.MustParse("1Ti"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-" + name, Labels: map[string]string{localcluster.KwokNodeLabel: "fake"}},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}
