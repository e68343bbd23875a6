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
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/internal/promtext"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// drainCase is one drain a round times.
type drainCase struct {
	name string
	// plugin drains with kubectl evictionrequest drain, else kubectl drain.
	plugin bool
	// optIn labels the namespace for the eviction API bridge.
	optIn bool
	// intercepted pods declare the sample interceptor (responder).
	intercepted bool
	// webhookLatency reads the bridge's latency from kube-apiserver's
	// metrics around the drain.
	webhookLatency bool
	// direct evicts the pods through the Eviction API directly
	// (evict-node), at the plugin's rate: the control plane's own limit.
	direct bool
}

var (
	ours         = drainCase{name: "ours", plugin: true}
	kubectlDrain = drainCase{name: "kubectl-drain"}
	direct       = drainCase{name: "direct-evictions", direct: true}
	// bridgeCases measure the bridge: kubectl drain of pods without
	// interceptors where kube-apiserver calls it, and drains of pods whose
	// interceptor completes at once, by kubectl drain through the bridge
	// and by the plugin.
	bridgeCases = []drainCase{
		{name: "kubectl-drain-bridge", optIn: true, webhookLatency: true},
		{name: "kubectl-drain-intercepted", optIn: true, intercepted: true},
		{name: "ours-intercepted", plugin: true, optIn: true, intercepted: true},
	}
)

// drained is what one drain measured.
type drained struct {
	seconds float64
	// cpu is the CPU seconds each process used during the drain.
	cpu map[string]float64
	// webhook is the bridge's latency during the drain, when measured.
	webhook *webhookLatency
	// writesPerPod are kube-apiserver's writes per pod, when measured.
	writesPerPod map[string]float64
	// serverWritesPerPod are our server's, on our API.
	serverWritesPerPod map[string]float64
}

// probes are what a case reads of kube-apiserver before its drain.
type probes struct {
	writes writeCounts
	// serverWrites are our server's, on our API.
	serverWrites writeCounts
	webhook      promtext.Histogram
}

// probeBefore reads what the case measures around its drain: the writes
// of kubectl evictionrequest drain, the bridge's latency.
func (c drainCase) probeBefore(ctx context.Context, cluster *localcluster.Cluster) (p probes, err error) {
	if c == ours || c == direct {
		if p.writes, err = scrapeWrites(ctx, cluster.AdminConfig); err != nil {
			return p, err
		}
	}
	if c == ours && len(cluster.Replicas()) > 0 {
		if p.serverWrites, err = scrapeWrites(ctx, cluster.ServerClientConfig(cluster.EvictionServer())); err != nil {
			return p, err
		}
	}
	if c.webhookLatency {
		p.webhook, err = scrapeWebhookHistogram(ctx, cluster)
	}
	return p, err
}

// probeAfter completes d with what changed since p over a drain of pods.
func (c drainCase) probeAfter(ctx context.Context, cluster *localcluster.Cluster, p probes, pods int, d *drained) error {
	if c == ours || c == direct {
		after, err := scrapeWrites(ctx, cluster.AdminConfig)
		if err != nil {
			return err
		}
		d.writesPerPod = after.perPod(p.writes, pods)
	}
	if p.serverWrites != nil {
		after, err := scrapeWrites(ctx, cluster.ServerClientConfig(cluster.EvictionServer()))
		if err != nil {
			return err
		}
		d.serverWritesPerPod = after.perPod(p.serverWrites, pods)
	}
	if c.webhookLatency {
		after, err := scrapeWebhookHistogram(ctx, cluster)
		if err != nil {
			return err
		}
		if d.webhook, err = latencySince(after, p.webhook); err != nil {
			return err
		}
	}
	return nil
}

// bridgeResult is what the benchmark measured of the eviction API bridge.
type bridgeResult struct {
	// KubectlDrainOptedIn are the times of kubectl drain of pods without
	// interceptors in an opted-in namespace; Ratio is their median over
	// that of kubectl drain in a namespace not opted in.
	KubectlDrainOptedIn       []float64 `json:"kubectlDrainOptedInSeconds"`
	KubectlDrainOptedInMedian float64   `json:"kubectlDrainOptedInMedianSeconds"`
	Ratio                     float64   `json:"ratio"`
	// WebhookCalls, WebhookP50Seconds and WebhookP99Seconds are
	// kube-apiserver's calls of the bridge during those drains and their
	// latency, as its admission webhook histogram records it (medians of
	// the rounds).
	WebhookCalls      float64 `json:"webhookCalls"`
	WebhookP50Seconds float64 `json:"webhookP50Seconds"`
	WebhookP99Seconds float64 `json:"webhookP99Seconds"`
	// Intercepted are the drains of pods whose interceptor completes at
	// once: kubectl drain through the bridge and the plugin;
	// InterceptedRatio is the former's median over the latter's.
	InterceptedKubectlDrain []float64 `json:"interceptedKubectlDrainSeconds"`
	InterceptedOurs         []float64 `json:"interceptedOursSeconds"`
	InterceptedRatio        float64   `json:"interceptedRatio"`
}

func newBridgeResult(seconds map[string][]float64, kubectlMedian float64, webhook []webhookLatency) *bridgeResult {
	r := &bridgeResult{
		KubectlDrainOptedIn:     seconds[bridgeCases[0].name],
		InterceptedKubectlDrain: seconds[bridgeCases[1].name],
		InterceptedOurs:         seconds[bridgeCases[2].name],
	}
	r.KubectlDrainOptedInMedian = median(r.KubectlDrainOptedIn)
	r.Ratio = r.KubectlDrainOptedInMedian / kubectlMedian
	r.InterceptedRatio = median(r.InterceptedKubectlDrain) / median(r.InterceptedOurs)
	var calls, p50, p99 []float64
	for _, w := range webhook {
		calls, p50, p99 = append(calls, w.calls), append(p50, w.p50), append(p99, w.p99)
	}
	r.WebhookCalls, r.WebhookP50Seconds, r.WebhookP99Seconds = median(calls), median(p50), median(p99)
	return r
}

func (r *bridgeResult) print() {
	fmt.Printf("The eviction API bridge:\n")
	fmt.Printf("  kubectl drain, opted in        %6.1f s  (%.1f-%.1f)\n", r.KubectlDrainOptedInMedian, slices.Min(r.KubectlDrainOptedIn), slices.Max(r.KubectlDrainOptedIn))
	fmt.Printf("  ratio to kubectl drain         %6.2f\n", r.Ratio)
	fmt.Printf("  webhook calls per drain        %6.0f  p50 %.1f ms  p99 %.1f ms (kube-apiserver's histogram)\n", r.WebhookCalls, r.WebhookP50Seconds*1000, r.WebhookP99Seconds*1000)
	fmt.Printf("Pods whose interceptor completes at once:\n")
	fmt.Printf("  kubectl drain, through bridge  %6.1f s  (%.1f-%.1f)\n", median(r.InterceptedKubectlDrain), slices.Min(r.InterceptedKubectlDrain), slices.Max(r.InterceptedKubectlDrain))
	fmt.Printf("  kubectl evictionrequest drain  %6.1f s  (%.1f-%.1f)\n", median(r.InterceptedOurs), slices.Min(r.InterceptedOurs), slices.Max(r.InterceptedOurs))
	fmt.Printf("  ratio                          %6.2f\n", r.InterceptedRatio)
}

// bridgeOverlay is the overlay with the eviction API bridge of api.
func bridgeOverlay(api string) string {
	if api == "lifecycle" {
		return localcluster.LifecycleBridgeOverlay
	}
	return localcluster.BridgeOverlay
}

// The sample interceptor's name on each API.
const (
	sampleInterceptor = "bench.interceptor.example.com"
	sampleResponder   = "bench.example.com/interceptor"
)

// declareSampleInterceptor makes a pod declare the sample interceptor
// (responder).
func declareSampleInterceptor(api string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if api == "lifecycle" {
			p.Spec.EvictionResponders = []corev1.EvictionResponder{{Name: sampleResponder, Priority: ptr.To[int32](1000)}}
			return
		}
		p.Annotations = map[string]string{v1alpha1.PodInterceptorsAnnotation: sampleInterceptor}
	}
}

// startSampleInterceptor runs examples/sample-interceptor, completing each
// turn at once, with a client fast enough not to be what a drain waits
// for; the returned function stops it.
func startSampleInterceptor(ctx context.Context, cluster *localcluster.Cluster, o options) (func(), error) {
	name := sampleInterceptor
	if o.api == "lifecycle" {
		name = sampleResponder
	}
	logFile, err := os.Create(filepath.Join(cluster.LogDir(), "sample-interceptor.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(o.binDir, "sample-interceptor"),
		"--kubeconfig="+cluster.KubeconfigPath, "--api="+o.api, "--name="+name,
		"--steps=0", "--outcome=complete", "--kube-api-qps=500", "--kube-api-burst=1000", "-v=1")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		_ = logFile.Close()
	}, nil
}

// webhookLatency is the bridge's latency over a drain.
type webhookLatency struct {
	calls, p50, p99 float64
}

// webhookHistogram is the metric of kube-apiserver's calls of its
// admission webhooks.
const webhookHistogram = "apiserver_admission_webhook_admission_duration_seconds"

// scrapeWebhookHistogram reads the bridge's buckets from kube-apiserver's
// /metrics, summed over their other labels.
func scrapeWebhookHistogram(ctx context.Context, cluster *localcluster.Cluster) (promtext.Histogram, error) {
	body, err := benchutil.APIServerMetrics(ctx, cluster.AdminConfig)
	if err != nil {
		return nil, err
	}
	return body.Histogram(webhookHistogram, func(labels string) bool {
		name, _ := promtext.Label(labels, "name")
		return name == bridge.WebhookName
	})
}

// latencySince is the bridge's latency over the calls between earlier and
// h: an error when there were none, since the drain was meant to call it.
func latencySince(h, earlier promtext.Histogram) (*webhookLatency, error) {
	delta := h.Since(earlier)
	if delta.Count() <= 0 {
		return nil, fmt.Errorf("kube-apiserver did not call the eviction API bridge during the drain")
	}
	return &webhookLatency{calls: delta.Count(), p50: delta.Quantile(0.5), p99: delta.Quantile(0.99)}, nil
}
