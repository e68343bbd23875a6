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
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// The pool case: a pool of nodes drained a few at a time by `kubectl
// evictionrequest drain -l --max-concurrent-nodes`, against `kubectl drain`
// of the same nodes one after another, as a pool upgrade script does.

// poolLabel marks the nodes of one round's pool.
const poolLabel = "bench.evictionrequest.example.com/pool"

// poolOptions size the pool case.
type poolOptions struct {
	// nodes is the pool's size; 0 skips the case.
	nodes, pods int
	// maxConcurrent is the plugin's --max-concurrent-nodes.
	maxConcurrent string
}

// poolResult is what the pool case measured.
type poolResult struct {
	Nodes              int       `json:"nodes"`
	PodsPerNode        int       `json:"podsPerNode"`
	MaxConcurrentNodes string    `json:"maxConcurrentNodes"`
	OursSeconds        []float64 `json:"oursSeconds"`
	KubectlDrain       []float64 `json:"kubectlDrainSeconds"`
	OursMedian         float64   `json:"oursMedianSeconds"`
	KubectlMedian      float64   `json:"kubectlDrainMedianSeconds"`
	Ratio              float64   `json:"ratio"`
}

// benchPool runs the pool case's rounds, alternating which drain goes
// first.
func benchPool(ctx context.Context, cluster *localcluster.Cluster, o options) (*poolResult, error) {
	res := &poolResult{Nodes: o.pool.nodes, PodsPerNode: o.pool.pods, MaxConcurrentNodes: o.pool.maxConcurrent}
	for round := 0; round < o.rounds; round++ {
		order := []bool{true, false}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, plugin := range order {
			name := fmt.Sprintf("pool-kubectl-%d", round)
			if plugin {
				name = fmt.Sprintf("pool-ours-%d", round)
			}
			seconds, err := drainPoolOnce(ctx, cluster, o, name, plugin)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", round, name, err)
			}
			klog.FromContext(ctx).Info("Drained a pool", "round", round, "case", name, "nodes", o.pool.nodes, "podsPerNode", o.pool.pods, "seconds", seconds)
			if plugin {
				res.OursSeconds = append(res.OursSeconds, seconds)
			} else {
				res.KubectlDrain = append(res.KubectlDrain, seconds)
			}
		}
	}
	res.OursMedian, res.KubectlMedian = median(res.OursSeconds), median(res.KubectlDrain)
	res.Ratio = res.OursMedian / res.KubectlMedian
	return res, nil
}

// drainPoolOnce fills a fresh pool of nodes, each with its namespace of
// pods, and times its drain: one command of the plugin, or kubectl drain of
// each node in turn.
func drainPoolOnce(ctx context.Context, cluster *localcluster.Cluster, o options, name string, plugin bool) (float64, error) {
	var cleanups []func()
	defer func() {
		for _, cleanup := range slices.Backward(cleanups) {
			cleanup()
		}
	}()
	nodes := make([]string, o.pool.nodes)
	for i := range nodes {
		node, _, cleanup, err := prepareNode(ctx, cluster, options{pods: o.pool.pods, api: o.api}, fmt.Sprintf("%s-%d", name, i), drainCase{})
		cleanups = append(cleanups, cleanup)
		if err != nil {
			return 0, err
		}
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, poolLabel, name)
		if _, err := cluster.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return 0, err
		}
		nodes[i] = node
	}
	var commands [][]string
	kubeconfig := "--kubeconfig=" + cluster.KubeconfigPath
	if plugin {
		commands = append(commands, []string{filepath.Join(o.binDir, "kubectl-evictionrequest"), kubeconfig, "drain", "-l", poolLabel + "=" + name,
			"--max-concurrent-nodes=" + o.pool.maxConcurrent, "--api=" + o.api, "--force", "--output=lines", fmt.Sprintf("--timeout=%s", o.timeout)})
	} else {
		for _, node := range nodes {
			commands = append(commands, []string{filepath.Join(o.binDir, "kubectl"), kubeconfig, "drain", node,
				"--force", "--ignore-daemonsets", "--delete-emptydir-data", fmt.Sprintf("--timeout=%s", o.timeout)})
		}
	}
	start := time.Now()
	for _, command := range commands {
		if err := benchutil.RunLogged(ctx, cluster.LogDir(), name, command); err != nil {
			return 0, err
		}
	}
	seconds := time.Since(start).Seconds()
	for i := range nodes {
		ns := fmt.Sprintf("%s-%d", name, i)
		pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		if len(pods.Items) != 0 {
			return 0, fmt.Errorf("%d pods left in %s after the drain", len(pods.Items), ns)
		}
	}
	return seconds, nil
}

// print reports the pool case on standard output.
func (res *poolResult) print() {
	fmt.Printf("Drain of a pool of %d nodes of %d pods each (min-max):\n", res.Nodes, res.PodsPerNode)
	fmt.Printf("  kubectl evictionrequest drain -l --max-concurrent-nodes=%s  %6.1f s  (%.1f-%.1f)\n",
		res.MaxConcurrentNodes, res.OursMedian, slices.Min(res.OursSeconds), slices.Max(res.OursSeconds))
	fmt.Printf("  kubectl drain of each node in turn       %6.1f s  (%.1f-%.1f)\n", res.KubectlMedian, slices.Min(res.KubectlDrain), slices.Max(res.KubectlDrain))
	fmt.Printf("  ratio                                    %6.2f\n", res.Ratio)
}
