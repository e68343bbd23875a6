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

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/internal/promtext"
)

// watched are the processes whose cost the benchmark reports: ours, and
// the control plane's beside them for scale (kube-controller-manager
// caches the same pods and nodes as ours do).
var watched = []string{"evictionrequest-apiserver", "evictionrequest-controller", "surge-interceptor", "kube-controller-manager", "kube-scheduler", "kube-apiserver", "etcd", "kwok"}

// memory is one process's memory at one size.
type memory struct {
	// HeapInUse is go_memstats_heap_inuse_bytes, 0 when the process
	// exposes no /metrics the benchmark reads (etcd, kube-scheduler, kwok).
	HeapInUse float64 `json:"heapInUseBytes"`
	RSS       float64 `json:"rssBytes"`
}

// process finds the running process name of the cluster.
func (b *bench) process(name string) (*localcluster.Process, error) {
	for _, p := range b.cluster.Processes() {
		if p.Name == name {
			select {
			case <-p.Done():
			default:
				return p, nil
			}
		}
	}
	return nil, fmt.Errorf("no running process %s in the cluster", name)
}

// metrics reads the /metrics of the process name.
func (b *bench) metrics(ctx context.Context, name string) (promtext.Samples, error) {
	switch name {
	case "kube-apiserver":
		return benchutil.APIServerMetrics(ctx, b.cluster.AdminConfig)
	case "evictionrequest-apiserver":
		return benchutil.APIServerMetrics(ctx, b.cluster.ServerClientConfig(b.cluster.EvictionServer()))
	}
	p, err := b.process(name)
	if err != nil {
		return nil, err
	}
	if p.MetricsURL == "" {
		return nil, nil
	}
	return promtext.Get(ctx, p.MetricsClient, p.MetricsURL, callTimeout)
}

// memoryOf reads the heap in use (the median of three samples a second
// apart: one moves with the garbage collector's cycle) and the RSS of the
// process name.
func (b *bench) memoryOf(ctx context.Context, name string) (memory, error) {
	p, err := b.process(name)
	if err != nil {
		return memory{}, err
	}
	var m memory
	var heaps []float64
	for range 3 {
		samples, err := b.metrics(ctx, name)
		if err != nil {
			return memory{}, fmt.Errorf("the /metrics of %s: %w", name, err)
		}
		if v, ok := samples.Value("go_memstats_heap_inuse_bytes"); ok {
			heaps = append(heaps, v)
		}
		select {
		case <-ctx.Done():
			return memory{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if len(heaps) == 3 {
		m.HeapInUse = median(heaps)
	}
	kib, err := benchutil.ProcStatusKiB(p.Pid(), "VmRSS")
	if err != nil {
		return memory{}, err
	}
	m.RSS = kib * 1024
	return m, nil
}

// idleCPU measures each watched process's CPU, in cores, over --idle
// while nothing but the cluster's own heartbeats happens.
func (b *bench) idleCPU(ctx context.Context) (map[string]float64, error) {
	before := map[string]float64{}
	pids := map[string]int{}
	for _, name := range watched {
		p, err := b.process(name)
		if err != nil {
			return nil, err
		}
		pids[name] = p.Pid()
		if before[name], err = benchutil.CPUSeconds(p.Pid()); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(b.o.idle):
	}
	elapsed := time.Since(start).Seconds()
	cores := map[string]float64{}
	for _, name := range watched {
		after, err := benchutil.CPUSeconds(pids[name])
		if err != nil {
			return nil, fmt.Errorf("%s exited while idle: %w", name, err)
		}
		cores[name] = (after - before[name]) / elapsed
	}
	return cores, nil
}
