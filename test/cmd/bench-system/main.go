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

// Command bench-system measures, side by side on one local control plane,
// the EvictionRequest API of evictionrequest-apiserver, reached through the
// kube-apiserver aggregator, against an equivalent CustomResourceDefinition
// served by kube-apiserver itself (crd.yaml: the same schema and
// immutability rules, no admission plugin, no controller). For each it
// measures creates, status updates and server-side applies (a second
// requester joining) per second at each client count, as
// an admin (system:masters) and as an ordinary service account with RBAC,
// as interceptors and requesters run; the CPU of every process of the
// control plane per create; the time of a LIST of every object; the heap
// each object held costs the processes that hold it (kube-apiserver and its
// etcd for both, and our server with its embedded etcd for ours) and the
// growth of the resident memory of every process. Rounds alternate which goes
// first. It prints one table of medians (min-max) with the ratios, writes
// it as JSON and draws the ratios as a PNG chart. `make bench-system` runs
// it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

type options struct {
	dir, binDir, out, chart string
	rounds, ops, objects    int
	clients                 []int
	qps                     float32
	burst                   int
	timeout                 time.Duration
	profileDir              string
	createRate              float64
	writes                  bool
	profileSeconds          int
	oursContent             string
}

func main() {
	var o options
	var clients string
	var qps float64
	flag.StringVar(&o.dir, "dir", "_output/bench-system", "Directory of the benchmark's cluster; wiped at start.")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "Directory of the cluster binaries and evictionrequest-apiserver.")
	flag.StringVar(&o.out, "out", "_output/bench/system.json", "Where to write the results as JSON.")
	flag.StringVar(&o.chart, "chart", "_output/bench/system.png", "Where to draw the chart of the ratios (PNG).")
	flag.IntVar(&o.rounds, "rounds", 3, "Rounds; each measures both APIs, alternating which goes first.")
	flag.IntVar(&o.ops, "ops", 1000, "Operations in each measured phase: creates, then a status update of each, then a server-side apply of each.")
	flag.IntVar(&o.objects, "objects", 10000, "Objects held for the LIST and heap measures.")
	flag.StringVar(&clients, "clients", "1,16,64", "Comma-separated numbers of concurrent clients of the write phases.")
	flag.Float64Var(&qps, "client-qps", 5000, "Client-side rate limit of the load generator's clients, per user; high so that the servers are measured, not the client.")
	flag.IntVar(&o.burst, "client-burst", 10000, "Client-side burst of the load generator's clients.")
	flag.DurationVar(&o.timeout, "request-timeout", 60*time.Second, "Time-out of every request of the load generator.")
	flag.StringVar(&o.profileDir, "profile-dir", "", "When set, a CPU profile of each server is taken during each write phase, and heap profiles when half and when all of the first round's held objects are created (their difference is what the objects hold: go tool pprof -diff_base), and written here (CPU profiles of the last round).")
	flag.IntVar(&o.profileSeconds, "profile-seconds", 5, "Length of each CPU profile; keep it shorter than a phase.")
	flag.Float64Var(&o.createRate, "held-create-rate", 500, "Creates per second, at most, of the objects held for the heap, LIST and time-to-selection measures.")
	flag.BoolVar(&o.writes, "writes", true, "Run the write phases; false measures only the objects held.")
	flag.StringVar(&o.oursContent, "ours-content-type", protobufContent, "What the load generator speaks to our API: protobuf, as the generated clientset and the SDK's interceptors and requesters do, or json, as kubectl does. The CRD speaks JSON.")
	klog.InitFlags(nil)
	flag.Parse()
	o.qps = float32(qps)
	for _, c := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "--clients: %q is not a positive number\n", c)
			os.Exit(2)
		}
		o.clients = append(o.clients, n)
	}
	if o.oursContent != protobufContent && o.oursContent != jsonContent {
		fmt.Fprintf(os.Stderr, "--ours-content-type: %q is neither %s nor %s\n", o.oursContent, protobufContent, jsonContent)
		os.Exit(2)
	}
	if o.rounds < 1 || o.ops < 1 || o.objects < o.ops || o.objects < 2 || o.createRate <= 0 {
		fmt.Fprintln(os.Stderr, "--rounds, --ops and --held-create-rate must be positive and --objects at least --ops and 2")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.Background().Error(err, "bench-system failed")
		os.Exit(1)
	}
}
