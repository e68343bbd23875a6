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

// Command bench-karpenter measures what the eviction API bridge costs and
// gives when Karpenter consolidates nodes: Karpenter (its KWOK provider)
// consolidates --nodes nodes, each holding a one-replica Deployment the
// surge interceptor guards, once in a namespace opted in to the bridge and
// once in one that is not, on the same cluster one after the other. For
// each it reports the time from the moment the nodes became underutilized
// until every one of them was gone, and the fewest ready replicas any of
// the Deployments had meanwhile (0 without the bridge: Karpenter's
// eviction goes through at once; 1 with it: the bridge refuses it until
// the surge's replacement is Ready).
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
	api              string
	nodes            int
	budget           string
	readyAfter       time.Duration
	timeout          time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "_output/bench-karpenter", "Directory of the benchmark's cluster; wiped at start.")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "Directory of the binaries, Karpenter's included.")
	flag.StringVar(&o.out, "out", "_output/bench/karpenter.json", "Where to write the results as JSON.")
	flag.StringVar(&o.api, "api", "coordination", "EvictionRequest API of the bridge and the surge interceptor: coordination (evictionrequest-apiserver) or lifecycle (kube-apiserver's, with evictionrequest-controller).")
	flag.IntVar(&o.nodes, "nodes", 4, "Nodes Karpenter consolidates in each case, each with one one-replica Deployment the surge interceptor guards.")
	flag.StringVar(&o.budget, "budget", "1", "nodes of the NodePool's disruption budget: how many nodes Karpenter disrupts at once.")
	flag.DurationVar(&o.readyAfter, "ready-after", 3*time.Second, "How long a pod of the Deployments takes to become Ready once it runs (an application that loads).")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "Time-out of one consolidation.")
	klog.InitFlags(nil)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.Background().Error(err, "bench-karpenter failed")
		os.Exit(1)
	}
}

// result is the run's figures, as written to --out.
type result struct {
	API   string    `json:"api"`
	Nodes int       `json:"nodes"`
	When  time.Time `json:"when"`
	// Cases are the consolidation through the bridge and without it.
	Cases []consolidated `json:"cases"`
	// Ratio is the consolidation's time through the bridge over its time
	// without it.
	Ratio float64 `json:"ratio"`
}

func run(ctx context.Context, o options) error {
	logger := klog.FromContext(ctx)
	if o.api != "coordination" && o.api != "lifecycle" {
		return fmt.Errorf("--api must be coordination or lifecycle, got %q", o.api)
	}
	if o.nodes < 1 {
		return fmt.Errorf("--nodes must be at least 1, got %d", o.nodes)
	}
	lifecycle := o.api == "lifecycle"
	overlay := localcluster.BridgeOverlay
	if lifecycle {
		overlay = localcluster.LifecycleBridgeOverlay
	}
	cluster, err := localcluster.Start(ctx, localcluster.Config{
		Dir: o.dir, BinDir: o.binDir, Overlay: overlay, Lifecycle: lifecycle,
		Nodes: 1, SurgeInterceptor: true, Karpenter: true,
		Logf: func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return err
	}
	defer cluster.Stop()

	res := result{API: o.api, Nodes: o.nodes, When: time.Now().UTC()}
	for _, throughBridge := range []bool{true, false} {
		c, err := consolidate(ctx, cluster, o, throughBridge)
		if err != nil {
			return fmt.Errorf("consolidation %s: %w", caseName(throughBridge), err)
		}
		logger.Info("Consolidated", "case", c.Case, "nodes", o.nodes, "seconds", c.Seconds, "minReady", c.MinReady)
		res.Cases = append(res.Cases, c)
	}
	res.Ratio = res.Cases[0].Seconds / res.Cases[1].Seconds
	printTable(res)
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	return os.WriteFile(o.out, data, 0o644)
}

// printTable writes res as a table.
func printTable(res result) {
	fmt.Printf("Karpenter consolidating %d nodes of one-replica Deployments the surge interceptor guards (%s):\n", res.Nodes, res.API)
	fmt.Printf("%-16s %10s %22s %20s\n", "case", "seconds", "fewest ready replicas", "Deployments at zero")
	for _, c := range res.Cases {
		fmt.Printf("%-16s %10.1f %22d %20d\n", c.Case, c.Seconds, c.MinReady, c.AtZero)
	}
	fmt.Printf("through the bridge / without it: %.2f\n", res.Ratio)
}
