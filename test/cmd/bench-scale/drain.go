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
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	coordinationv1alpha1 "github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// drainKind is what a timed drain runs.
type drainKind struct {
	name string
	// api is the plugin's --api; empty runs kubectl drain, through the
	// bridge (its namespace opts in).
	api string
	// nodes is how many nodes it drains, with one command.
	nodes int
}

// drainTime is how long a drain took from its command's start.
type drainTime struct {
	// Requested is when every pod had a request (0 for kubectl drain).
	Requested float64 `json:"requestedSeconds"`
	// Gone is when every pod was deleted.
	Gone float64 `json:"goneSeconds"`
	// CPU is the CPU seconds each process of the cluster used from the
	// command's start to every pod gone: the drain's own, and what the
	// cluster's size costs meanwhile (kwok's heartbeats of every node).
	CPU map[string]float64 `json:"cpuSeconds"`
}

// requestResources are the EvictionRequests of each API.
var requestResources = map[string]schema.GroupVersionResource{
	"coordination": coordinationv1alpha1.SchemeGroupVersion.WithResource("evictionrequests"),
	"lifecycle":    {Group: "lifecycle.k8s.io", Version: "v1alpha1", Resource: "evictionrequests"},
}

// drain fills fresh kwok nodes with --drain-pods pods each, in a namespace
// of their own, and times their drain: when the last pod had a request
// and when the last was gone, from the watches of both. The namespace is
// deleted, and gone, before it returns, so that its deletion does not run
// during the next measurement.
func (b *bench) drain(ctx context.Context, kind drainKind) (*drainTime, error) {
	b.drains++
	ns := fmt.Sprintf("drain-%d-%s", b.drains, kind.name)
	var labels []string
	if kind.api == "" {
		labels = []string{bridge.NamespaceLabel, bridge.NamespaceOptIn}
	}
	if err := b.ensureNamespace(ctx, ns, labels...); err != nil {
		return nil, err
	}
	defer benchutil.DeleteNamespace(ctx, b.client, ns)
	nodes, err := b.cluster.AddKwokNodes(ctx, kind.nodes)
	if err != nil {
		return nil, err
	}
	n := kind.nodes * b.o.drainPods
	var once sync.Once
	var createErr error
	workqueue.ParallelizeUntil(ctx, 32, n, func(i int) {
		pod := benchPod(ns, fmt.Sprintf("pod-%d", i), nodes[i/b.o.drainPods])
		if err := b.create(ctx, pod); err != nil {
			once.Do(func() { createErr = err })
		}
	})
	if createErr != nil {
		return nil, createErr
	}
	if err := b.waitRunning(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + ns}, n); err != nil {
		return nil, err
	}
	command, err := b.drainCommand(ctx, kind, ns, nodes)
	if err != nil {
		return nil, err
	}
	return b.timeDrain(ctx, kind, ns, n, command)
}

// drainCommand is the command that drains nodes: the plugin by a label
// selector it sets on them, or kubectl drain of them all.
func (b *bench) drainCommand(ctx context.Context, kind drainKind, ns string, nodes []string) ([]string, error) {
	kubeconfig := "--kubeconfig=" + b.cluster.KubeconfigPath
	timeout := fmt.Sprintf("--timeout=%s", b.o.timeout)
	if kind.api == "" {
		return append([]string{filepath.Join(b.o.binDir, "kubectl"), kubeconfig, "drain", "--force", "--ignore-daemonsets", timeout}, nodes...), nil
	}
	for _, node := range nodes {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, drainLabel, ns)
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := b.client.CoreV1().Nodes().Patch(callCtx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		cancel()
		if err != nil {
			return nil, err
		}
	}
	return []string{filepath.Join(b.o.binDir, "kubectl-evictionrequest"), kubeconfig, "drain", "-l", drainLabel + "=" + ns,
		"--api=" + kind.api, "--max-concurrent-nodes=" + b.o.poolMaxConcurrent, "--force", "--output=lines", timeout}, nil
}

// drainLabel selects the nodes of one drain.
const drainLabel = "bench.evictionrequest.example.com/drain"

// timeDrain runs command and times it by the watches of the namespace's
// requests and pods, which start before it does.
func (b *bench) timeDrain(ctx context.Context, kind drainKind, ns string, n int, command []string) (*drainTime, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pods, err := b.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	defer pods.Stop()
	// kubectl drain makes no requests: a nil channel, never ready.
	var requestEvents <-chan watch.Event
	if kind.api != "" {
		requests, err := b.cluster.Dynamic.Resource(requestResources[kind.api]).Namespace(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		defer requests.Stop()
		requestEvents = requests.ResultChan()
	}
	cpuBefore := benchutil.CPUByProcess(b.cluster.Processes())
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- benchutil.RunLogged(ctx, b.cluster.LogDir(), ns, command) }()
	t := &drainTime{}
	requested, gone := map[string]bool{}, map[string]bool{}
	timeout := time.After(b.o.timeout)
	for len(gone) < n || (kind.api != "" && len(requested) < n) {
		select {
		case err := <-done:
			if err != nil {
				return nil, err
			}
			done = nil
		case ev, ok := <-requestEvents:
			if !ok {
				return nil, fmt.Errorf("the watch of %s's requests ended", ns)
			}
			if obj, isObj := ev.Object.(metav1.Object); isObj && ev.Type == watch.Added && !requested[obj.GetName()] {
				if requested[obj.GetName()] = true; len(requested) == n {
					t.Requested = time.Since(start).Seconds()
				}
			}
		case ev, ok := <-pods.ResultChan():
			if !ok {
				return nil, fmt.Errorf("the watch of %s's pods ended", ns)
			}
			if pod, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type == watch.Deleted && !gone[pod.Name] {
				if gone[pod.Name] = true; len(gone) == n {
					t.Gone = time.Since(start).Seconds()
				}
			}
		case <-timeout:
			return nil, fmt.Errorf("%s: %d of %d pods gone, %d requested, after %s", ns, len(gone), n, len(requested), b.o.timeout)
		}
	}
	t.CPU = benchutil.CPUSince(b.cluster.Processes(), cpuBefore)
	if done != nil {
		if err := <-done; err != nil {
			return nil, err
		}
	}
	return t, nil
}
