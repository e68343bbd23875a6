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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// populationLabel marks the pods that make the cluster's size, as opposed
// to those of the drains.
const populationLabel = "bench.evictionrequest.example.com/population"

// nodesPerNamespace is how many nodes' pods share a namespace of the
// population.
const nodesPerNamespace = 100

// callTimeout bounds one call of the benchmark's client.
const callTimeout = 30 * time.Second

// bench is one run: the cluster and what it holds.
type bench struct {
	o       options
	cluster *localcluster.Cluster
	// client creates the population's pods at --kube-api-qps.
	client kubernetes.Interface
	// population are the kwok nodes that hold the population's pods.
	population []string
	// drains counts the drains, which name their nodes' namespaces.
	drains int
}

func newBench(cluster *localcluster.Cluster, o options) (*bench, error) {
	config := *cluster.AdminConfig
	config.QPS, config.Burst = float32(o.qps), o.burst
	client, err := kubernetes.NewForConfig(&config)
	if err != nil {
		return nil, err
	}
	return &bench{o: o, cluster: cluster, client: client}, nil
}

// grow adds kwok nodes until the population has nodes, each with
// --pods-per-node running pods, and returns once kwok runs them all.
func (b *bench) grow(ctx context.Context, nodes int) error {
	if nodes <= len(b.population) {
		return nil
	}
	start := time.Now()
	added, err := b.cluster.AddKwokNodes(ctx, nodes-len(b.population))
	if err != nil {
		return err
	}
	first := len(b.population)
	b.population = append(b.population, added...)
	for i := first / nodesPerNamespace; i <= (len(b.population)-1)/nodesPerNamespace; i++ {
		if err := b.ensureNamespace(ctx, populationNamespace(i)); err != nil {
			return err
		}
	}
	n := len(added) * b.o.podsPerNode
	var once sync.Once
	var createErr error
	workqueue.ParallelizeUntil(ctx, 32, n, func(i int) {
		node := first + i/b.o.podsPerNode
		pod := benchPod(populationNamespace(node/nodesPerNamespace), fmt.Sprintf("pod-%d-%d", node, i%b.o.podsPerNode), b.population[node])
		pod.Labels = map[string]string{populationLabel: "true"}
		if err := b.create(ctx, pod); err != nil {
			once.Do(func() { createErr = err })
		}
	})
	if createErr != nil {
		return createErr
	}
	if err := b.waitRunning(ctx, metav1.ListOptions{LabelSelector: populationLabel}, len(b.population)*b.o.podsPerNode); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Grew the cluster", "nodes", len(b.population), "pods", len(b.population)*b.o.podsPerNode, "seconds", time.Since(start).Seconds())
	return nil
}

func populationNamespace(i int) string {
	return fmt.Sprintf("population-%d", i)
}

// ensureNamespace creates the namespace name, and waits for its default
// service account, which pods need.
func (b *bench) ensureNamespace(ctx context.Context, name string, labels ...string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(labels); i += 2 {
		ns.Labels[labels[i]] = labels[i+1]
	}
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := b.client.CoreV1().Namespaces().Create(callCtx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		_, err := b.client.CoreV1().ServiceAccounts(name).Get(callCtx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// benchPod is a pod bound to node, without a controller: the drains force
// it out, as kubectl drain --force does.
func benchPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

func (b *bench) create(ctx context.Context, pod *corev1.Pod) error {
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := b.client.CoreV1().Pods(pod.Namespace).Create(callCtx, pod, metav1.CreateOptions{})
	return err
}

// waitRunning waits until kwok runs every one of the want pods selected
// by opts, across namespaces; it reads kube-apiserver's watch cache.
func (b *bench) waitRunning(ctx context.Context, opts metav1.ListOptions, want int) error {
	opts.ResourceVersion = "0"
	var running int
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, b.o.timeout, true, func(ctx context.Context) (bool, error) {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		list, err := b.client.CoreV1().Pods(metav1.NamespaceAll).List(callCtx, opts)
		if err != nil {
			return false, nil
		}
		running = 0
		for i := range list.Items {
			if list.Items[i].Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running >= want, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d pods running: %w", running, want, err)
	}
	return nil
}
