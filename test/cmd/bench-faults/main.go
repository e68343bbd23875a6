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
// audit log, and checks the invariants on it (internal/faults/check). Then,
// unless --baseline=false, it drains the same workload on a new cluster
// without faults: the difference of the drain times is the recovery cost.
// It prints the tables and exits 1 on any violation or fault that could not
// be injected (a component that did not come back).
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
	"slices"
	"sort"
	"syscall"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/faults/check"
	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	coordinationapi "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	lifecycleapi "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
)

const namespace = "faults"

type options struct {
	api                   string
	dir, binDir, out      string
	seed                  uint64
	nodes, spare, perNode int
	faults                int
	replicas              int
	baseline              bool
	interval, freeze      time.Duration
	outage                time.Duration
	deadline, timeout     time.Duration
	slow                  time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.api, "api", apiCoordination, "API the drains go through: coordination (our server, HA, with the bridge), lifecycle (Kubernetes' lifecycle.k8s.io with evictionrequest-controller) or upstream (lifecycle.k8s.io with Kubernetes 1.38's controllers, ours for the actors).")
	flag.StringVar(&o.dir, "dir", "_output/bench-faults", "Directory of the cluster and of the record.")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "Directory of the binaries.")
	flag.StringVar(&o.out, "out", "_output/bench/faults.json", "The run's figures, as JSON.")
	flag.Uint64Var(&o.seed, "seed", 1, "Seed of the fault schedule.")
	flag.IntVar(&o.nodes, "nodes", 20, "Nodes drained: half by the declarative drain, a quarter by the plugin, a quarter by kubectl drain through the bridge.")
	flag.IntVar(&o.spare, "spare-nodes", 4, "Nodes left undrained, where replacements go.")
	flag.IntVar(&o.perNode, "pods-per-node", 8, "Pods on each drained node besides the Deployments'.")
	flag.IntVar(&o.faults, "faults", 12, "Faults injected, every kind at least once when there are as many; 0 runs without faults.")
	flag.IntVar(&o.replicas, "workload-replicas", 2, "Replicas of evictionrequest-controller and of the surge interceptor, leader-elected, as the chart runs them: a fault of one hits the leader and another takes over.")
	flag.BoolVar(&o.baseline, "baseline", true, "After the faulty run, drain the same workload on a new cluster without faults, for the recovery cost.")
	flag.DurationVar(&o.interval, "fault-interval", 15*time.Second, "Mean time between faults.")
	flag.DurationVar(&o.freeze, "freeze", 20*time.Second, "How long a frozen server replica stays frozen (past its 15s lease).")
	flag.DurationVar(&o.outage, "outage", 5*time.Second, "How long the server's etcd stays frozen and the path from kube-apiserver to the replicas stays cut.")
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
	API    string         `json:"api"`
	Seed   uint64         `json:"seed"`
	Nodes  int            `json:"nodes"`
	Pods   int            `json:"pods"`
	Faults map[string]int `json:"faults"`
	// FailedFaults counts, per kind, the faults that could not be injected
	// or healed: a component that did not come back.
	FailedFaults map[string]int `json:"failedFaults,omitempty"`
	DrainSeconds float64        `json:"drainSeconds"`
	// BaselineDrainSeconds is the drain time of the run without faults,
	// zero when it was not made.
	BaselineDrainSeconds float64        `json:"baselineDrainSeconds,omitempty"`
	Violations           int            `json:"violations"`
	BaselineViolations   int            `json:"baselineViolations,omitempty"`
	Results              []check.Result `json:"results"`
	RecordPath           string         `json:"record"`
	AuditLogPath         string         `json:"auditLog"`
}

// outcome is what one campaign, with faults or without, found.
type outcome struct {
	counts, failed       map[string]int
	took                 time.Duration
	report               check.Report
	recordPath, auditLog string
}

func run(ctx context.Context, o options) (int, error) {
	f, err := flavourOf(o.api)
	if err != nil {
		return 0, err
	}
	faulty, err := campaign(ctx, o, f, o.dir, o.faults)
	if err != nil {
		return 0, err
	}
	fmt.Printf("%s, seed %d: %d nodes drained, %d pods, drains took %s\n", f.api, o.seed, o.nodes, o.nodes*(o.perNode+2), faulty.took.Round(time.Second))
	if err := printFaults(f, faulty); err != nil {
		return 0, err
	}
	if err := faulty.report.Print(os.Stdout); err != nil {
		return 0, err
	}
	s := summary{API: f.api, Seed: o.seed, Nodes: o.nodes, Pods: o.nodes * (o.perNode + 2), Faults: faulty.counts, FailedFaults: faulty.failed,
		DrainSeconds: faulty.took.Seconds(), Violations: faulty.report.Violations(), Results: faulty.report.Results,
		RecordPath: faulty.recordPath, AuditLogPath: faulty.auditLog}
	if o.baseline && o.faults > 0 {
		base, err := campaign(ctx, o, f, filepath.Join(o.dir, "baseline"), 0)
		if err != nil {
			return 0, fmt.Errorf("the run without faults: %w", err)
		}
		s.BaselineDrainSeconds, s.BaselineViolations = base.took.Seconds(), base.report.Violations()
		fmt.Printf("without faults: drains took %s, the recovery cost %s\n", base.took.Round(time.Second), (faulty.took - base.took).Round(time.Second))
		if err := base.report.Print(os.Stdout); err != nil {
			return 0, err
		}
	}
	if err := writeSummary(o.out, s); err != nil {
		return 0, err
	}
	failed := 0
	for _, n := range faulty.failed {
		failed += n
	}
	if s.Violations+s.BaselineViolations+failed > 0 {
		fmt.Printf("%d violations, %d without faults, %d faults not injected or healed; the record is %s, the audit log %s\n",
			s.Violations, s.BaselineViolations, failed, faulty.recordPath, faulty.auditLog)
		return 1, nil
	}
	return 0, nil
}

// printFaults prints the faults of a campaign per kind, with those that
// could not be injected or healed.
func printFaults(f flavour, out *outcome) error {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tINJECTED\tFAILED")
	for _, kind := range f.faults {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", kind, out.counts[kind], out.failed[kind])
	}
	return tw.Flush()
}

func writeSummary(path string, s summary) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(s, "", "  ")
	return os.WriteFile(path, data, 0o644)
}

// campaign starts the cluster in dir, creates the workload, drains it while
// the faults of the seed's schedule arrive, and checks the record.
func campaign(ctx context.Context, o options, f flavour, dir string, faults int) (*outcome, error) {
	logger := klog.FromContext(ctx)
	cluster, err := localcluster.Start(ctx, f.cluster(o, dir, func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) }))
	if err != nil {
		return nil, err
	}
	defer cluster.Stop()
	if err := checkBridgePolicy(ctx, cluster.Client, bridgeFailurePolicy); err != nil {
		return nil, err
	}
	clientset, err := versioned.NewForConfig(cluster.AdminConfig)
	if err != nil {
		return nil, err
	}
	recordPath := filepath.Join(dir, "record.jsonl")
	record, err := history.Create(recordPath)
	if err != nil {
		return nil, err
	}
	// Closed again below once the recording stopped; this one is for the
	// early returns.
	defer func() { _ = record.Close() }()
	recCtx, stopRecording := context.WithCancel(ctx)
	defer stopRecording()
	rec := &recorder{w: record}
	for _, l := range listers(f, cluster.Client, clientset, namespace) {
		if err := rec.start(recCtx, l); err != nil {
			return nil, err
		}
	}
	r := rand.New(rand.NewPCG(o.seed, o.seed))
	in := &injector{cluster: cluster, record: record, rand: r, interval: o.interval, freeze: o.freeze, outage: o.outage,
		counts: map[string]int{}, failed: map[string]int{}}
	took, err := drainUnderFaults(ctx, recCtx, o, f, cluster, clientset, record, in, schedule(r, f.faults, faults))
	if err != nil {
		return nil, err
	}
	logger.Info("Drains ended", "took", took)
	settle(ctx, f, cluster.Client, clientset)
	stopRecording()
	rec.wg.Wait()
	if err := record.Close(); err != nil {
		return nil, err
	}
	report, err := checkRecord(recordPath, cluster.AuditLogPath, f.silent)
	if err != nil {
		return nil, err
	}
	return &outcome{counts: in.counts, failed: in.failed, took: took, report: report, recordPath: recordPath, auditLog: cluster.AuditLogPath}, nil
}

// drainUnderFaults creates the workload and the slow participant, starts
// the faults of kinds and the drains, and returns how long the drains took
// once they and the faults are over.
func drainUnderFaults(ctx, recCtx context.Context, o options, f flavour, cluster *localcluster.Cluster, clientset versioned.Interface,
	record *history.Writer, in *injector, kinds []string) (time.Duration, error) {
	nodes := append([]string(nil), cluster.NodeNames...)
	sort.Strings(nodes)
	drained := nodes[:o.nodes]
	if err := labelPool(ctx, cluster, nodes); err != nil {
		return 0, err
	}
	declarative, plugin, kubectl := drained[:o.nodes/2], drained[o.nodes/2:o.nodes*3/4], drained[o.nodes*3/4:]
	// The nodes of the drains with a deadline (the declarative drain's and
	// the plugin's) hold pods of the participant that never answers, whose
	// eviction at the deadline the checker allows.
	silentOK := map[string]bool{}
	for _, n := range append(slices.Clone(declarative), plugin...) {
		silentOK[n] = true
	}
	if err := createWorkload(ctx, f, cluster.Client, namespace, drained, o.perNode, silentOK); err != nil {
		return 0, err
	}
	slow, err := interceptor.New(interceptor.Config{
		Name: f.slow, Namespace: namespace, API: f.sdk, Client: clientset, KubeClient: cluster.Client,
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

	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		in.run(ctx, kinds)
	}()
	d := &drainer{client: cluster.Client, record: record, apiServer: cluster.AdminConfig.Host, binDir: o.binDir, kubeconfig: cluster.KubeconfigPath, api: f.api, deadline: o.deadline, timeout: o.timeout}
	start := time.Now()
	d.run(ctx, history.DrainDeclarative, declarative)
	d.run(ctx, history.DrainPlugin, plugin)
	for _, n := range kubectl {
		d.run(ctx, history.DrainKubectl, []string{n})
	}
	d.wg.Wait()
	took := time.Since(start)
	<-faultsDone
	return took, nil
}

// settle waits, at most two minutes, until every pod's eviction completed
// or waits on the silent participant, so that the record ends on a settled
// cluster.
func settle(ctx context.Context, f flavour, kube kubernetes.Interface, clientset versioned.Interface) {
	_ = retry(ctxWithTimeout(ctx, 2*time.Minute), func(ctx context.Context) error {
		if f.lifecycle() {
			return evictionsSettled(ctx, kube, f.silent)
		}
		return requestsSettled(ctx, clientset, f.silent)
	})
}

// requestsSettled is nil once every one of our requests completed or waits
// on silent.
func requestsSettled(ctx context.Context, clientset versioned.Interface, silent string) error {
	list, err := clientset.CoordinationV1alpha1().EvictionRequests(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		r := &list.Items[i]
		if a := r.Status.ActiveInterceptorName; !coordinationapi.IsComplete(r) && (a == nil || *a != silent) {
			return fmt.Errorf("request %s not settled", r.Name)
		}
	}
	return nil
}

// evictionsSettled is nil once every lifecycle Eviction finished or is
// held by silent.
func evictionsSettled(ctx context.Context, kube kubernetes.Interface, silent string) error {
	list, err := kube.LifecycleV1alpha1().Evictions(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		if ev := &list.Items[i]; !lifecycleapi.IsFinished(ev) && !lifecycleapi.IsHeldBy(ev, silent) {
			return fmt.Errorf("eviction %s not settled", ev.Name)
		}
	}
	return nil
}

func ctxWithTimeout(ctx context.Context, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(ctx, d)
	go func() { <-ctx.Done(); cancel() }()
	return ctx
}

// checkRecord checks the invariants on the record and the audit log.
func checkRecord(recordPath, auditPath, silent string) (check.Report, error) {
	f, err := os.Open(recordPath)
	if err != nil {
		return check.Report{}, err
	}
	defer f.Close()
	entries, err := history.Read(f)
	if err != nil {
		return check.Report{}, err
	}
	a, err := os.Open(auditPath)
	if err != nil {
		return check.Report{}, err
	}
	defer a.Close()
	audit, err := check.ReadAudit(a)
	if err != nil {
		return check.Report{}, err
	}
	return check.Check(entries, audit, check.Options{SilentParticipants: []string{silent}})
}
