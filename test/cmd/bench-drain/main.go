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
// exits, every pod gone (and, for ours, every EvictionRequest complete).
// Rounds alternate which command goes first; it prints the medians and their
// ratio and writes them as JSON. With --api=lifecycle the cluster serves
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
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/bridge"
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
}

// result is what the benchmark writes as JSON.
type result struct {
	Pods          int       `json:"pods"`
	ServerArgs    []string  `json:"serverArgs,omitempty"`
	Rounds        int       `json:"rounds"`
	OursSeconds   []float64 `json:"oursSeconds"`
	KubectlDrain  []float64 `json:"kubectlDrainSeconds"`
	OursMedian    float64   `json:"oursMedianSeconds"`
	KubectlMedian float64   `json:"kubectlDrainMedianSeconds"`
	Ratio         float64   `json:"ratio"`
	API           string    `json:"api"`
	// HeapPerEvictionBytes is, on lifecycle.k8s.io, how much the
	// controller's heap grew per Eviction (and its EvictionRequest) it
	// holds.
	HeapPerEvictionBytes float64       `json:"heapPerEvictionBytes,omitempty"`
	Bridge               *bridgeResult `json:"bridge,omitempty"`
	// Pool is the drain of a pool of nodes in waves against kubectl drain
	// of each node in turn.
	Pool *poolResult `json:"pool,omitempty"`
	// WritesPerPod are kube-apiserver's write requests per pod during the
	// last drain by kubectl evictionrequest drain, by "VERB resource", with
	// their sum under "total": the plugin's, the controller's, the
	// evictor's, the events and kwok's.
	WritesPerPod map[string]float64 `json:"writesPerPod,omitempty"`
	When         time.Time          `json:"when"`
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
	flag.BoolVar(&o.baseline, "baseline", true, "In the one-node case, drain with kubectl drain too, for the ratio; false times only kubectl evictionrequest drain there (and skips the bridge's cases), to compare two builds of the controller or server in runs one after the other.")
	flag.IntVar(&o.pool.nodes, "pool-nodes", 10, "Nodes of the pool case, drained by kubectl evictionrequest drain -l --max-concurrent-nodes against kubectl drain of each in turn; 0 skips it.")
	flag.IntVar(&o.pool.pods, "pool-pods", 50, "Pods on each node of the pool case.")
	flag.StringVar(&o.pool.maxConcurrent, "pool-max-concurrent-nodes", "3", "The plugin's --max-concurrent-nodes in the pool case.")
	flag.Func("server-arg", "An extra flag of evictionrequest-apiserver (or, with --api=lifecycle, evictionrequest-controller), such as --kube-api-qps=200; repeat for more.", func(v string) error {
		o.serverArgs = append(o.serverArgs, v)
		return nil
	})
	klog.InitFlags(nil)
	flag.Parse()
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
	cfg := localcluster.Config{
		Dir: o.dir, BinDir: o.binDir, Lifecycle: o.api == "lifecycle", ServerArgs: o.serverArgs,
		Logf: func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
	}
	var cases []drainCase
	if o.pods > 0 {
		cases = []drainCase{ours}
	}
	if o.pods > 0 && o.baseline {
		cases = append(cases, kubectlDrain)
	}
	// The bridge's cases are kubectl drain's.
	o.bridge = o.bridge && o.baseline
	if o.bridge && o.pods > 0 {
		cfg.Components = []string{bridgeComponent(o.api)}
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
			if d.webhook != nil {
				webhook = append(webhook, *d.webhook)
			}
			if d.writesPerPod != nil {
				res.WritesPerPod = d.writesPerPod
			}
		}
	}
	if o.pods > 0 {
		res.OursSeconds, res.OursMedian = seconds[ours.name], median(seconds[ours.name])
	}
	if o.pods > 0 && o.baseline {
		res.KubectlDrain, res.KubectlMedian = seconds[kubectlDrain.name], median(seconds[kubectlDrain.name])
		res.Ratio = res.OursMedian / res.KubectlMedian
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

// print reports the results on standard output.
func (res *result) print(o options) {
	if o.pods == 0 {
		return
	}
	fmt.Printf("Drain of %d pods on one node through %s, median of %d rounds (min-max):\n", o.pods, o.api, o.rounds)
	fmt.Printf("  kubectl evictionrequest drain  %6.1f s  (%.1f-%.1f)\n", res.OursMedian, slices.Min(res.OursSeconds), slices.Max(res.OursSeconds))
	if o.baseline {
		fmt.Printf("  kubectl drain                  %6.1f s  (%.1f-%.1f)\n", res.KubectlMedian, slices.Min(res.KubectlDrain), slices.Max(res.KubectlDrain))
		fmt.Printf("  ratio                          %6.2f\n", res.Ratio)
	}
	if res.HeapPerEvictionBytes > 0 {
		fmt.Printf("  controller heap per Eviction   %6.1f KiB\n", res.HeapPerEvictionBytes/1024)
	}
	if res.Bridge != nil {
		res.Bridge.print()
	}
	fmt.Printf("kube-apiserver's writes per pod, kubectl evictionrequest drain (last round):\n")
	for _, key := range slices.Sorted(maps.Keys(res.WritesPerPod)) {
		fmt.Printf("  %-40s %5.2f\n", key, res.WritesPerPod[key])
	}
}

// drainOnce fills a fresh node with pods and times one command draining it.
func drainOnce(ctx context.Context, cluster *localcluster.Cluster, o options, name string, c drainCase) (drained, error) {
	node, ns, cleanup, err := prepareNode(ctx, cluster, o, name, c)
	defer cleanup()
	if err != nil {
		return drained{}, err
	}
	bin, args := drainCommand(cluster, o, node, c)
	p, err := c.probeBefore(ctx, cluster)
	if err != nil {
		return drained{}, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	start := time.Now()
	err = cmd.Run()
	d := drained{seconds: time.Since(start).Seconds()}
	logFile := filepath.Join(cluster.LogDir(), name+".log")
	_ = os.WriteFile(logFile, output.Bytes(), 0o644)
	if err != nil {
		return drained{}, fmt.Errorf("%s: %w (output in %s)", bin, err, logFile)
	}
	if err := c.probeAfter(ctx, cluster, p, o.pods, &d); err != nil {
		return drained{}, err
	}
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return drained{}, err
	}
	if len(pods.Items) != 0 {
		return drained{}, fmt.Errorf("%d pods left after %s exited", len(pods.Items), bin)
	}
	return d, nil
}

// prepareNode creates a node and a namespace named after name, and fills
// the node with o.pods pods of the case; cleanup deletes both.
func prepareNode(ctx context.Context, cluster *localcluster.Cluster, o options, name string, c drainCase) (node, ns string, cleanup func(), err error) {
	client := cluster.Client
	var undo []func()
	cleanup = func() {
		for _, f := range slices.Backward(undo) {
			f()
		}
	}
	created, err := client.CoreV1().Nodes().Create(ctx, benchNode(name), metav1.CreateOptions{})
	if err != nil {
		return "", "", cleanup, err
	}
	undo = append(undo, func() { _ = client.CoreV1().Nodes().Delete(context.Background(), created.Name, metav1.DeleteOptions{}) })
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if c.optIn {
		namespace.Labels = map[string]string{bridge.NamespaceLabel: bridge.NamespaceOptIn}
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, namespace, metav1.CreateOptions{}); err != nil {
		return "", "", cleanup, err
	}
	undo = append(undo, func() { deleteNamespace(client, name) })
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return "", "", cleanup, fmt.Errorf("the default service account of %s: %w", name, err)
	}
	var mutate func(*corev1.Pod)
	if c.intercepted {
		mutate = declareSampleInterceptor(o.api)
	}
	_, err = fillNode(ctx, client, name, created.Name, o.pods, mutate)
	return created.Name, name, cleanup, err
}

// deleteNamespace deletes the namespace name and waits, at most five
// minutes, until it is gone: the namespace controller's deletion of what a
// drain left (requests, Evictions, events) would otherwise run during the
// next drain and slow it down, so that later rounds measured the clean-up
// of earlier ones.
func deleteNamespace(client kubernetes.Interface, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		klog.FromContext(ctx).Error(err, "Deleting a drained namespace", "namespace", name)
		return
	}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Waiting for a drained namespace to be gone", "namespace", name)
	}
}

// drainCommand is the command line of the case's drain of node.
func drainCommand(cluster *localcluster.Cluster, o options, node string, c drainCase) (bin string, args []string) {
	args = []string{"--kubeconfig=" + cluster.KubeconfigPath}
	if c.plugin {
		return filepath.Join(o.binDir, "kubectl-evictionrequest"),
			append(args, "drain", node, "--api="+o.api, "--force", "--output=lines", fmt.Sprintf("--timeout=%s", o.timeout))
	}
	return filepath.Join(o.binDir, "kubectl"),
		append(args, "drain", node, "--force", "--ignore-daemonsets", "--delete-emptydir-data", fmt.Sprintf("--timeout=%s", o.timeout))
}

// fillNode creates n running pods on node in ns, changed by mutate, and
// returns them once kwok runs them all.
func fillNode(ctx context.Context, client kubernetes.Interface, ns, node string, n int, mutate func(*corev1.Pod)) ([]*corev1.Pod, error) {
	pods := make([]*corev1.Pod, n)
	var createErr error
	workqueue.ParallelizeUntil(ctx, 16, n, func(i int) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: ns},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if mutate != nil {
			mutate(pod)
		}
		created, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			createErr = err
			return
		}
		pods[i] = created
	})
	if createErr != nil {
		return nil, createErr
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		running := 0
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n, nil
	}); err != nil {
		return nil, fmt.Errorf("waiting for %d pods to run: %w", n, err)
	}
	return pods, nil
}

func benchNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourcePods:   resource.MustParse("1000"),
		corev1.ResourceCPU:    resource.MustParse("256"),
		corev1.ResourceMemory: resource.MustParse("1Ti"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-" + name, Labels: map[string]string{localcluster.KwokNodeLabel: "fake"}},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

func median(values []float64) float64 {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
