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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/internal/promtext"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// holder is a responder that never runs: the Evictions of its pods stay
// held, its turn active, for the 20 minutes of its heartbeat deadline.
const holder = "bench.example.com/holder"

// heapPerEviction measures how much evictionrequest-controller's heap
// grows per Eviction it holds: n pods on a node of their own declare a
// responder that never answers, each gets an EvictionRequest, and the heap
// in use is sampled before and once every Eviction has its responder
// active.
func heapPerEviction(ctx context.Context, cluster *localcluster.Cluster, n int) (float64, error) {
	client := cluster.Client
	node, err := client.CoreV1().Nodes().Create(ctx, benchNode("held"), metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "held"}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return 0, err
	}
	pods, err := fillNode(ctx, client, ns.Name, node.Name, n, func(p *corev1.Pod) {
		p.Spec.EvictionResponders = []corev1.EvictionResponder{{Name: holder, Priority: ptr.To[int32](1000)}}
	})
	if err != nil {
		return 0, err
	}
	controller := cluster.LifecycleController()
	before, err := heapInUse(ctx, controller)
	if err != nil {
		return 0, err
	}
	r, err := requester.NewLifecycle("bench.example.com/requester", client, requester.Options{})
	if err != nil {
		return 0, err
	}
	var requestErr error
	workqueue.ParallelizeUntil(ctx, 16, n, func(i int) {
		if _, err := r.Request(ctx, pods[i]); err != nil {
			requestErr = err
		}
	})
	if requestErr != nil {
		return 0, requestErr
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.LifecycleV1alpha1().Evictions(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		held := 0
		for i := range list.Items {
			if lifecycleutil.ActiveResponder(&list.Items[i]) == holder {
				held++
			}
		}
		return held == n, nil
	}); err != nil {
		return 0, fmt.Errorf("waiting for %d held Evictions: %w", n, err)
	}
	after, err := heapInUse(ctx, controller)
	if err != nil {
		return 0, err
	}
	return (after - before) / float64(n), nil
}

// heapInUse is the median of five samples of the process's
// go_memstats_heap_inuse_bytes, two seconds apart: one sample moves with
// the garbage collector's cycle.
func heapInUse(ctx context.Context, p *localcluster.Process) (float64, error) {
	var samples []float64
	for range 5 {
		v, err := scrape(ctx, p, "go_memstats_heap_inuse_bytes")
		if err != nil {
			return 0, err
		}
		samples = append(samples, v)
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	slices.Sort(samples)
	return samples[len(samples)/2], nil
}

func scrape(ctx context.Context, p *localcluster.Process, metric string) (float64, error) {
	samples, err := promtext.Get(ctx, p.MetricsClient, p.MetricsURL, 10*time.Second)
	if err != nil {
		return 0, err
	}
	v, ok := samples.Value(metric)
	if !ok {
		return 0, fmt.Errorf("%s has no %s", p.MetricsURL, metric)
	}
	return v, nil
}
