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

// Command bench-scale measures what the product costs as the cluster
// grows: on one local control plane serving both APIs (our server with the
// eviction API bridge and the node drain, evictionrequest-controller beside
// it), it adds kwok nodes and their pods in steps up to --nodes, and at
// each size reports, side by side with kube-controller-manager (which
// caches the same pods), each process's heap in use and RSS, the time a
// drain of one node and of a pool of nodes takes through each API, and
// the latency of the bridge (kube-apiserver's webhook histogram) and of
// our admission plugin (our server's); at the largest size, each process's
// CPU while idle and its start-up, from start to ready. It prints the
// tables and each memory's slope in bytes per pod, and writes them as
// JSON. `make bench-scale` runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

type options struct {
	dir, binDir, out string
	// nodes and podsPerNode are the largest size; steps, how many sizes
	// lead up to it after the empty cluster.
	nodes, podsPerNode, steps int
	// drainPods are the pods of each drained node; poolNodes the nodes of
	// the drained pool, drained poolMaxConcurrent at a time.
	drainPods, poolNodes int
	poolMaxConcurrent    string
	// settle is the wait after a size is reached, before memory is read;
	// idle, how long CPU is measured at the largest size.
	settle, idle time.Duration
	// qps and burst are the benchmark's own client's, which creates the
	// pods.
	qps     float64
	burst   int
	timeout time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "_output/bench-scale", "Directory of the benchmark's cluster; wiped at start.")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "Directory of the cluster binaries, kubectl and kubectl-evictionrequest.")
	flag.StringVar(&o.out, "out", "_output/bench/scale.json", "Where to write the results as JSON.")
	flag.IntVar(&o.nodes, "nodes", 1000, "kwok nodes at the largest size.")
	flag.IntVar(&o.podsPerNode, "pods-per-node", 30, "Running pods on each kwok node.")
	flag.IntVar(&o.steps, "steps", 3, "Sizes after the empty cluster, evenly up to --nodes; three or more give the memory's slope.")
	flag.IntVar(&o.drainPods, "drain-pods", 30, "Pods of the node drained at each size.")
	flag.IntVar(&o.poolNodes, "pool-nodes", 10, "Nodes of the pool drained at each size (with --drain-pods pods each); 0 skips it.")
	flag.StringVar(&o.poolMaxConcurrent, "pool-max-concurrent-nodes", "3", "The plugin's --max-concurrent-nodes for the pool.")
	flag.DurationVar(&o.settle, "settle", 30*time.Second, "Wait after each size is reached, before memory is read: informers finish their lists and the garbage collector runs.")
	flag.DurationVar(&o.idle, "idle", time.Minute, "How long CPU is measured while idle at the largest size.")
	flag.Float64Var(&o.qps, "kube-api-qps", 500, "QPS of the benchmark's client, which creates the nodes' pods.")
	flag.IntVar(&o.burst, "kube-api-burst", 1000, "Burst of the benchmark's client.")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "Time-out of one drain, and of the pods of one size to run.")
	klog.InitFlags(nil)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.Background().Error(err, "bench-scale failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	logger := klog.FromContext(ctx)
	if o.steps < 1 || o.nodes < o.steps {
		return fmt.Errorf("--steps must be at least 1 and at most --nodes")
	}
	cluster, err := localcluster.Start(ctx, localcluster.Config{
		Dir: o.dir, BinDir: o.binDir, Nodes: 1,
		// Both APIs, the bridge for ours (one bridge is enough: both would
		// answer the same pods/eviction) and the node drain.
		LifecycleController: true,
		Overlay:             localcluster.BridgeOverlay,
		// The surge interceptor caches every pod, as ours do.
		SurgeInterceptor: true,
		ServerArgs:       []string{"--controllers=*,evictionrequest-node-drain"},
		Logf:             func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return err
	}
	defer cluster.Stop()
	b, err := newBench(cluster, o)
	if err != nil {
		return err
	}
	res := result{When: time.Now().UTC(), Nodes: o.nodes, PodsPerNode: o.podsPerNode, DrainPods: o.drainPods, PoolNodes: o.poolNodes}
	for step := 0; step <= o.steps; step++ {
		nodes := o.nodes * step / o.steps
		if err := b.grow(ctx, nodes); err != nil {
			return fmt.Errorf("growing to %d nodes: %w", nodes, err)
		}
		size, err := b.measureSize(ctx)
		if err != nil {
			return fmt.Errorf("at %d nodes: %w", nodes, err)
		}
		logger.Info("Measured a size", "nodes", size.Nodes, "pods", size.Pods)
		res.Sizes = append(res.Sizes, *size)
	}
	// What the last drains left (their namespaces' deletion) settles first.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(o.settle):
	}
	if res.Idle, err = b.idleCPU(ctx); err != nil {
		return err
	}
	// The sizes' measures are printed even when a restart fails.
	if res.StartUp, err = b.startUp(ctx); err != nil {
		logger.Error(err, "Measuring the start-up")
	}
	res.summarize()
	res.print()
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(o.out, append(out, '\n'), 0o644)
}
