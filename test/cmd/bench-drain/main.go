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

// Command bench-drain measures, side by side on one local control plane,
// how long `kubectl evictionrequest drain` and `kubectl drain` take to empty
// a node of the same number of pods: from the start of the command until it
// exits, every pod gone (and, for ours, every EvictionRequest complete);
// and, as the limit no drain can beat, the same pods evicted directly
// through the Eviction API at the plugin's rate and concurrency
// (evict-node). Rounds alternate which command goes first; it prints the
// medians and their ratios and writes them as JSON. With --api=lifecycle the cluster serves
// Kubernetes' lifecycle.k8s.io API with evictionrequest-controller, the
// plugin speaks it, and the benchmark then measures the controller's heap
// per Eviction held. `make bench-drain` runs it on both APIs.
//
// The cluster has the eviction API bridge installed (its component), so
// that, in the same rounds, it also measures what the bridge costs plain
// `kubectl drain` of pods without interceptors (a namespace opted in
// against one not opted in, which kube-apiserver does not call the bridge
// for), the bridge's latency as kube-apiserver records it, and `kubectl
// drain` through the bridge of pods whose interceptor completes at once (the
// sample interceptor) against `kubectl evictionrequest drain` of the same.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

type options struct {
	dir, binDir, out string
	// api is coordination or lifecycle.
	api          string
	pods, rounds int
	timeout      time.Duration
	// bridge measures the eviction API bridge too.
	bridge bool
	// baseline drains with kubectl drain too; without it only the plugin's
	// drains are timed, to compare two builds run one after the other.
	baseline bool
	// pool sizes the pool case.
	pool poolOptions
	// serverArgs are extra flags of evictionrequest-apiserver or
	// evictionrequest-controller.
	serverArgs []string
	// upstream runs, on lifecycle.k8s.io, Kubernetes 1.38's controllers
	// in place of ours, with upstreamArgs.
	upstream     bool
	upstreamArgs []string
	// profileDir, when set, receives CPU profiles of profileSeconds of the
	// servers during each drain of ours and of the direct evictions.
	profileDir     string
	profileSeconds int
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "_output/bench-drain", "Directory of the benchmark's cluster; wiped at start.")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "Directory of the cluster binaries, kubectl and kubectl-evictionrequest.")
	flag.StringVar(&o.out, "out", "_output/bench/drain.json", "Where to write the results as JSON.")
	flag.StringVar(&o.api, "api", "coordination", "EvictionRequest API the drain speaks: coordination (evictionrequest-apiserver) or lifecycle (kube-apiserver's, with evictionrequest-controller).")
	flag.IntVar(&o.pods, "pods", 500, "Pods on each drained node; 0 skips the one-node cases (and the bridge's), leaving the pool case.")
	flag.IntVar(&o.rounds, "rounds", 3, "Rounds; each drains one node with each command.")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "Time-out of one drain.")
	flag.BoolVar(&o.bridge, "bridge", true, "Measure the eviction API bridge too: kubectl drain in an opted-in namespace against one that is not, and through the bridge against kubectl evictionrequest drain of pods whose interceptor completes at once.")
	flag.BoolVar(&o.baseline, "baseline", true, "In the one-node case, drain with kubectl drain too, for the ratio; false measures only kubectl evictionrequest drain there, its time, writes and CPU by process (and skips the bridge's cases), to compare two builds of the controller or server in runs one after the other.")
	flag.IntVar(&o.pool.nodes, "pool-nodes", 10, "Nodes of the pool case, drained by kubectl evictionrequest drain -l --max-concurrent-nodes against kubectl drain of each in turn; 0 skips it.")
	flag.IntVar(&o.pool.pods, "pool-pods", 50, "Pods on each node of the pool case.")
	flag.StringVar(&o.pool.maxConcurrent, "pool-max-concurrent-nodes", "3", "The plugin's --max-concurrent-nodes in the pool case.")
	flag.StringVar(&o.profileDir, "profile-dir", "", "When set, CPU profiles of kube-apiserver, its etcd and (on our API) our server and its etcd are taken during each drain by kubectl evictionrequest drain and by the direct evictions, and written here as <case>-<round>-<process>.pprof.")
	flag.IntVar(&o.profileSeconds, "profile-seconds", 4, "Length of each CPU profile, from the drain's start; keep it shorter than the direct evictions' drain.")
	flag.Func("server-arg", "An extra flag of evictionrequest-apiserver (or, with --api=lifecycle, evictionrequest-controller), such as --kube-api-qps=200; repeat for more.", func(v string) error {
		o.serverArgs = append(o.serverArgs, v)
		return nil
	})
	klog.InitFlags(nil)
	controllers := flag.String("lifecycle-controllers", "ours", "With --api=lifecycle, whose eviction request controllers run: ours or upstream (Kubernetes 1.38's, as kube-controller-manager runs them; ours for the actors only).")
	flag.Func("upstream-arg", "An extra flag of Kubernetes' controllers with --lifecycle-controllers=upstream, such as --kube-api-qps=300 (kube-controller-manager's default is 20); repeat for more.", func(v string) error {
		o.upstreamArgs = append(o.upstreamArgs, v)
		return nil
	})
	flag.Parse()
	o.upstream = *controllers == "upstream"
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.Background().Error(err, "bench-drain failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	logger := klog.FromContext(ctx)
	if o.api != "coordination" && o.api != "lifecycle" {
		return fmt.Errorf("--api must be coordination or lifecycle, got %q", o.api)
	}
	if o.upstream && o.api != "lifecycle" {
		return fmt.Errorf("--lifecycle-controllers=upstream needs --api=lifecycle")
	}
	cfg := localcluster.Config{
		Dir: o.dir, BinDir: o.binDir, Lifecycle: o.api == "lifecycle", ServerArgs: o.serverArgs,
		UpstreamControllers: o.upstream, UpstreamControllerArgs: o.upstreamArgs,
		Logf: func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
	}
	var cases []drainCase
	if o.pods > 0 {
		cases = []drainCase{ours}
	}
	if o.pods > 0 && o.baseline {
		cases = append(cases, kubectlDrain, direct)
	}
	// The bridge's cases are kubectl drain's.
	o.bridge = o.bridge && o.baseline
	if o.bridge && o.pods > 0 {
		cfg.Overlay = bridgeOverlay(o.api)
		cases = append(cases, bridgeCases...)
	}
	cluster, err := localcluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer cluster.Stop()
	if o.bridge && o.pods > 0 {
		stopInterceptor, err := startSampleInterceptor(ctx, cluster, o)
		if err != nil {
			return err
		}
		defer stopInterceptor()
	}

	res := result{Pods: o.pods, Rounds: o.rounds, API: o.api, ServerArgs: o.serverArgs, When: time.Now().UTC()}
	seconds := map[string][]float64{}
	cpu := map[string][]map[string]float64{}
	var webhook []webhookLatency
	for round := 0; round < o.rounds; round++ {
		order := slices.Clone(cases)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, c := range order {
			d, err := drainOnce(ctx, cluster, o, fmt.Sprintf("%s-%d", c.name, round), c)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, c.name, err)
			}
			logger.Info("Drained", "round", round, "case", c.name, "pods", o.pods, "seconds", d.seconds)
			seconds[c.name] = append(seconds[c.name], d.seconds)
			cpu[c.name] = append(cpu[c.name], d.cpu)
			if d.webhook != nil {
				webhook = append(webhook, *d.webhook)
			}
			switch c {
			case ours:
				res.WritesPerPod, res.ServerWritesPerPod = d.writesPerPod, d.serverWritesPerPod
			case direct:
				res.DirectWritesPerPod = d.writesPerPod
			}
		}
	}
	if o.pods > 0 {
		res.OursSeconds, res.OursMedian = seconds[ours.name], median(seconds[ours.name])
		// Without the baseline too: two builds are compared by their CPU.
		res.CPUSeconds = map[string]map[string]float64{ours.name: medianCPU(cpu[ours.name])}
	}
	if o.pods > 0 && o.baseline {
		res.KubectlDrain, res.KubectlMedian = seconds[kubectlDrain.name], median(seconds[kubectlDrain.name])
		res.Ratio = res.OursMedian / res.KubectlMedian
		res.DirectSeconds, res.DirectMedian = seconds[direct.name], median(seconds[direct.name])
		res.RatioToDirect = res.OursMedian / res.DirectMedian
		res.CPUSeconds[direct.name] = medianCPU(cpu[direct.name])
	}
	if o.bridge && o.pods > 0 {
		res.Bridge = newBridgeResult(seconds, res.KubectlMedian, webhook)
	}
	if o.api == "lifecycle" && o.pods > 0 {
		if res.HeapPerEvictionBytes, err = heapPerEviction(ctx, cluster, o.pods); err != nil {
			return err
		}
	}
	// After the heap: its baseline is the controller after the rounds.
	if o.pool.nodes > 0 {
		if res.Pool, err = benchPool(ctx, cluster, o); err != nil {
			return err
		}
	}
	res.print(o)
	if res.Pool != nil {
		res.Pool.print()
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(o.out, append(data, '\n'), 0o644)
}
