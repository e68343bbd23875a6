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
	"time"

	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/promtext"
	"github.com/evictionrequest/apiserver/pkg/admission/plugin/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// size is what the benchmark measured at one size of the cluster.
type size struct {
	// Nodes are every kwok node (those of earlier drains, empty and
	// cordoned, among them); Pods, the running pods of the population.
	Nodes  int               `json:"nodes"`
	Pods   int               `json:"pods"`
	Memory map[string]memory `json:"memory"`
	// Drains are the times of the drains at this size, by drainKind.
	Drains map[string]drainTime `json:"drains"`
	// Bridge is kube-apiserver's latency of the eviction API bridge over
	// kubectl drain's evictions; Admission, our server's of its admission
	// plugin over the plugin's drains on our API.
	Bridge    latency `json:"bridge"`
	Admission latency `json:"admission"`
}

// latency is a histogram's summary over what a measurement counted.
type latency struct {
	Calls      float64 `json:"calls"`
	P50Seconds float64 `json:"p50Seconds"`
	P99Seconds float64 `json:"p99Seconds"`
}

// drainKinds are the drains of every size.
func (b *bench) drainKinds() []drainKind {
	kinds := []drainKind{
		{name: "node-coordination", api: "coordination", nodes: 1},
		{name: "node-lifecycle", api: "lifecycle", nodes: 1},
		{name: "kubectl-drain-bridge", nodes: 1},
	}
	if b.o.poolNodes > 0 {
		kinds = append(kinds,
			drainKind{name: "pool-coordination", api: "coordination", nodes: b.o.poolNodes},
			drainKind{name: "pool-lifecycle", api: "lifecycle", nodes: b.o.poolNodes})
	}
	return kinds
}

// The histograms of the latencies.
const (
	webhookHistogram   = "apiserver_admission_webhook_admission_duration_seconds"
	admissionHistogram = "apiserver_admission_controller_admission_duration_seconds"
)

// measureSize waits --settle, reads every watched process's memory, then
// times the drains and reads the latencies over them.
func (b *bench) measureSize(ctx context.Context) (*size, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(b.o.settle):
	}
	s := &size{Nodes: len(b.cluster.NodeNames), Pods: len(b.population) * b.o.podsPerNode, Memory: map[string]memory{}, Drains: map[string]drainTime{}}
	for _, name := range watched {
		m, err := b.memoryOf(ctx, name)
		if err != nil {
			return nil, err
		}
		s.Memory[name] = m
	}
	bridgeBefore, err := b.histogram(ctx, "kube-apiserver", webhookHistogram, bridge.WebhookName)
	if err != nil {
		return nil, err
	}
	admissionBefore, err := b.histogram(ctx, "evictionrequest-apiserver", admissionHistogram, evictionrequest.PluginName)
	if err != nil {
		return nil, err
	}
	for _, kind := range b.drainKinds() {
		t, err := b.drain(ctx, kind)
		if err != nil {
			return nil, fmt.Errorf("drain %s: %w", kind.name, err)
		}
		klog.FromContext(ctx).Info("Drained", "case", kind.name, "pods", kind.nodes*b.o.drainPods, "requestedSeconds", t.Requested, "goneSeconds", t.Gone)
		s.Drains[kind.name] = *t
	}
	if s.Bridge, err = b.latencySince(ctx, bridgeBefore, "kube-apiserver", webhookHistogram, bridge.WebhookName); err != nil {
		return nil, err
	}
	if s.Admission, err = b.latencySince(ctx, admissionBefore, "evictionrequest-apiserver", admissionHistogram, evictionrequest.PluginName); err != nil {
		return nil, err
	}
	return s, nil
}

// histogram reads the histogram metric of the process, summed over the
// series whose name label is name.
func (b *bench) histogram(ctx context.Context, process, metric, name string) (promtext.Histogram, error) {
	samples, err := b.metrics(ctx, process)
	if err != nil {
		return nil, fmt.Errorf("the /metrics of %s: %w", process, err)
	}
	return samples.Histogram(metric, func(labels string) bool {
		v, _ := promtext.Label(labels, "name")
		return v == name
	})
}

// latencySince summarizes what the histogram counted since earlier; an
// error when it counted nothing, since the drains were meant to call it.
func (b *bench) latencySince(ctx context.Context, earlier promtext.Histogram, process, metric, name string) (latency, error) {
	now, err := b.histogram(ctx, process, metric, name)
	if err != nil {
		return latency{}, err
	}
	delta := now.Since(earlier)
	if delta.Count() <= 0 {
		return latency{}, fmt.Errorf("%s recorded no %s{name=%q} during the drains", process, metric, name)
	}
	return latency{Calls: delta.Count(), P50Seconds: delta.Quantile(0.5), P99Seconds: delta.Quantile(0.99)}, nil
}
