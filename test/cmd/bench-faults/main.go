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

// Command bench-faults drains nodes of the local control plane in its HA
// scenario (two server replicas, a three-member etcd, the eviction API
// bridge) while faults arrive on a seeded schedule, records the history
// (every version of the pods, EvictionRequests, PodDisruptionBudgets,
// Deployments and Nodes, the faults, the drains) beside kube-apiserver's
// audit log, and checks the invariants on it (internal/faults/check). It
// prints the table and exits 1 on any violation. With --faults=0 it drains
// the same workload without faults: the time against the faulty run is the
// recovery cost.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/faults/check"
	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
)

const namespace = "faults"

type options struct {
	dir, binDir, out      string
	seed                  uint64
	nodes, spare, perNode int
	faults                int
	interval, freeze      time.Duration
	deadline, timeout     time.Duration
	slow                  time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "_output/bench-faults", "Directory of the cluster and of the record.")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "Directory of the binaries.")
	flag.StringVar(&o.out, "out", "_output/bench/faults.json", "The run's figures, as JSON.")
	flag.Uint64Var(&o.seed, "seed", 1, "Seed of the fault schedule.")
	flag.IntVar(&o.nodes, "nodes", 8, "Nodes drained: half by the declarative drain, a quarter by the plugin, a quarter by kubectl drain through the bridge.")
	flag.IntVar(&o.spare, "spare-nodes", 2, "Nodes left undrained, where replacements go.")
	flag.IntVar(&o.perNode, "pods-per-node", 6, "Pods on each drained node besides the Deployments'.")
	flag.IntVar(&o.faults, "faults", 6, "Faults injected; 0 runs without faults.")
	flag.DurationVar(&o.interval, "fault-interval", 15*time.Second, "Mean time between faults.")
	flag.DurationVar(&o.freeze, "freeze", 20*time.Second, "How long a frozen server replica stays frozen (past its 15s lease).")
	flag.DurationVar(&o.deadline, "drain-deadline", 90*time.Second, "Deadline of the declarative and plugin drains, which then evict what is left.")
	flag.DurationVar(&o.timeout, "drain-timeout", 6*time.Minute, "Time-out of every drain.")
	flag.DurationVar(&o.slow, "slow", 3*time.Second, "How long the slow participant takes to answer.")
	klog.InitFlags(nil)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, o)
	if err != nil {
		klog.Background().Error(err, "bench-faults failed")
		os.Exit(2)
	}
	os.Exit(code)
}

// summary is the run's figures.
type summary struct {
	Seed         uint64         `json:"seed"`
	Nodes        int            `json:"nodes"`
	Pods         int            `json:"pods"`
	Faults       map[string]int `json:"faults"`
	DrainSeconds float64        `json:"drainSeconds"`
	Violations   int            `json:"violations"`
	Results      []check.Result `json:"results"`
	RecordPath   string         `json:"record"`
	AuditLogPath string         `json:"auditLog"`
}

func run(ctx context.Context, o options) (int, error) {
	logger := klog.FromContext(ctx)
	cluster, err := localcluster.Start(ctx, localcluster.Config{
		Dir: o.dir, BinDir: o.binDir, Overlay: "ha-bridge", Nodes: o.nodes + o.spare, SurgeInterceptor: true,
		ServerArgs: []string{"--controllers=*,evictionrequest-node-drain", "--node-drain-pool-label=" + poolLabel, "--max-concurrent-node-drains-per-pool=2"},
		Logf:       func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return 0, err
	}
	defer cluster.Stop()
	clientset, err := versioned.NewForConfig(cluster.AdminConfig)
	if err != nil {
		return 0, err
	}
	recordPath := filepath.Join(o.dir, "record.jsonl")
	record, err := history.Create(recordPath)
	if err != nil {
		return 0, err
	}
	// Closed again below once the recording stopped; this one is for the
	// early returns.
	defer func() { _ = record.Close() }()
	recCtx, stopRecording := context.WithCancel(ctx)
	defer stopRecording()
	rec := &recorder{w: record}
	for _, l := range listers(cluster.Client, clientset, namespace) {
		if err := rec.start(recCtx, l); err != nil {
			return 0, err
		}
	}
	nodes := append([]string(nil), cluster.NodeNames...)
	sort.Strings(nodes)
	drained := nodes[:o.nodes]
	if err := labelPool(ctx, cluster, nodes); err != nil {
		return 0, err
	}
	declarative, plugin, kubectl := drained[:o.nodes/2], drained[o.nodes/2:o.nodes*3/4], drained[o.nodes*3/4:]
	silentOK := map[string]bool{}
	for _, n := range drained[:o.nodes*3/4] {
		silentOK[n] = true
	}
	if err := createWorkload(ctx, cluster.Client, namespace, drained, o.perNode, silentOK); err != nil {
		return 0, err
	}
	slow, err := interceptor.New(interceptor.Config{
		Name: slowParticipant, Namespace: namespace, API: evictionapi.Coordination, Client: clientset, KubeClient: cluster.Client,
		HeartbeatPeriod: time.Second,
		Handler: func(ctx context.Context, _ *interceptor.Request) (interceptor.Result, error) {
			select {
			case <-ctx.Done():
				return interceptor.Result{}, ctx.Err()
			case <-time.After(o.slow):
				return interceptor.Complete("answered after %s", o.slow), nil
			}
		},
	})
	if err != nil {
		return 0, err
	}
	go func() { _ = slow.Run(recCtx) }()

	in := &injector{cluster: cluster, record: record, rand: rand.New(rand.NewPCG(o.seed, o.seed)), interval: o.interval, freeze: o.freeze, counts: map[string]int{}}
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		in.run(ctx, o.faults)
	}()
	d := &drainer{client: cluster.Client, record: record, binDir: o.binDir, kubeconfig: cluster.KubeconfigPath, deadline: o.deadline, timeout: o.timeout}
	start := time.Now()
	d.run(ctx, history.DrainDeclarative, declarative)
	d.run(ctx, history.DrainPlugin, plugin)
	for _, n := range kubectl {
		d.run(ctx, history.DrainKubectl, []string{n})
	}
	d.wg.Wait()
	took := time.Since(start)
	logger.Info("Drains ended", "took", took)
	<-faultsDone
	settle(ctx, clientset)
	stopRecording()
	rec.wg.Wait()
	if err := record.Close(); err != nil {
		return 0, err
	}
	return report(o, recordPath, cluster.AuditLogPath, in.counts, took)
}

// settle waits, at most two minutes, until every request completed or
// waits on the silent participant, so that the record ends on a settled
// cluster.
func settle(ctx context.Context, clientset versioned.Interface) {
	_ = retry(ctxWithTimeout(ctx, 2*time.Minute), func(ctx context.Context) error {
		list, err := clientset.CoordinationV1alpha1().EvictionRequests(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, r := range list.Items {
			a := r.Status.ActiveInterceptorName
			done := false
			for _, c := range r.Status.Conditions {
				done = done || (c.Type == "Complete" && c.Status == metav1.ConditionTrue)
			}
			if !done && (a == nil || *a != silentParticipant) {
				return fmt.Errorf("request %s not settled", r.Name)
			}
		}
		return nil
	})
}

func ctxWithTimeout(ctx context.Context, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(ctx, d)
	go func() { <-ctx.Done(); cancel() }()
	return ctx
}

func report(o options, recordPath, auditPath string, faults map[string]int, took time.Duration) (int, error) {
	f, err := os.Open(recordPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	entries, err := history.Read(f)
	if err != nil {
		return 0, err
	}
	a, err := os.Open(auditPath)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	audit, err := check.ReadAudit(a)
	if err != nil {
		return 0, err
	}
	res, err := check.Check(entries, audit, check.Options{SilentParticipants: []string{silentParticipant}})
	if err != nil {
		return 0, err
	}
	fmt.Printf("seed %d: %d nodes drained, %d faults %v, drains took %s\n", o.seed, o.nodes, o.faults, faults, took.Round(time.Second))
	if err := res.Print(os.Stdout); err != nil {
		return 0, err
	}
	s := summary{Seed: o.seed, Nodes: o.nodes, Pods: o.nodes * (o.perNode + 2), Faults: faults, DrainSeconds: took.Seconds(),
		Violations: res.Violations(), Results: res.Results, RecordPath: recordPath, AuditLogPath: auditPath}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return 0, err
	}
	data, _ := json.MarshalIndent(s, "", "  ")
	if err := os.WriteFile(o.out, data, 0o644); err != nil {
		return 0, err
	}
	if s.Violations > 0 {
		fmt.Printf("%d violations; the record is %s, the audit log %s\n", s.Violations, recordPath, auditPath)
		return 1, nil
	}
	return 0, nil
}
