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
	"fmt"
	"slices"
	"strings"
	"time"
)

// result is what a run measured, written as JSON.
type result struct {
	When        time.Time `json:"when"`
	Nodes       int       `json:"nodes"`
	PodsPerNode int       `json:"podsPerNode"`
	DrainPods   int       `json:"drainPods"`
	PoolNodes   int       `json:"poolNodes"`
	Sizes       []size    `json:"sizes"`
	// Slopes are each process's memory per pod of the population (nodes
	// growing with them), by least squares over the sizes.
	Slopes map[string]memory `json:"bytesPerPod"`
	// Idle is each process's CPU at the largest size while nothing
	// happens, in cores.
	Idle map[string]float64 `json:"idleCores"`
	// StartUp is how long our processes take to start at the largest
	// size.
	StartUp map[string]startUp `json:"startUp"`
}

// summarize computes the slopes.
func (r *result) summarize() {
	r.Slopes = map[string]memory{}
	pods := make([]float64, len(r.Sizes))
	for i, s := range r.Sizes {
		pods[i] = float64(s.Pods)
	}
	for _, name := range watched {
		heap, rss := make([]float64, len(r.Sizes)), make([]float64, len(r.Sizes))
		for i, s := range r.Sizes {
			heap[i], rss[i] = s.Memory[name].HeapInUse, s.Memory[name].RSS
		}
		r.Slopes[name] = memory{HeapInUse: slope(pods, heap), RSS: slope(pods, rss)}
	}
}

// slope is the least-squares slope of y over x.
func slope(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func median(values []float64) float64 {
	sorted := slices.Sorted(slices.Values(values))
	return sorted[len(sorted)/2]
}

const mib = 1 << 20

// print reports the run on standard output.
func (r *result) print() {
	fmt.Printf("Memory, heap in use / RSS in MiB, by pods (nodes) of the population:\n")
	fmt.Printf("  %-28s", "")
	for _, s := range r.Sizes {
		fmt.Printf(" %17s", fmt.Sprintf("%d (%d)", s.Pods, s.Nodes))
	}
	fmt.Printf("  bytes per pod (heap / RSS)\n")
	for _, name := range watched {
		fmt.Printf("  %-28s", name)
		for _, s := range r.Sizes {
			m := s.Memory[name]
			fmt.Printf(" %17s", fmt.Sprintf("%.0f / %.0f", m.HeapInUse/mib, m.RSS/mib))
		}
		fmt.Printf("  %.0f / %.0f\n", r.Slopes[name].HeapInUse, r.Slopes[name].RSS)
	}
	kcm := r.Slopes["kube-controller-manager"]
	fmt.Printf("Bytes per pod against kube-controller-manager's (heap / RSS):\n")
	for _, name := range []string{"evictionrequest-apiserver", "evictionrequest-controller", "surge-interceptor"} {
		fmt.Printf("  %-28s %.2f / %.2f\n", name, ratio(r.Slopes[name].HeapInUse, kcm.HeapInUse), ratio(r.Slopes[name].RSS, kcm.RSS))
	}
	fmt.Printf("Drains, seconds to every request made / every pod gone, by pods of the population:\n")
	for _, kind := range []string{"node-coordination", "node-lifecycle", "pool-coordination", "pool-lifecycle", "kubectl-drain-bridge"} {
		var cells []string
		for _, s := range r.Sizes {
			if d, ok := s.Drains[kind]; ok {
				cells = append(cells, fmt.Sprintf("%17s", fmt.Sprintf("%.1f / %.1f", d.Requested, d.Gone)))
			}
		}
		if len(cells) > 0 {
			fmt.Printf("  %-28s %s\n", kind, strings.Join(cells, " "))
		}
	}
	for _, kind := range []string{"pool-coordination", "pool-lifecycle"} {
		r.printDrainCPU(kind)
	}
	fmt.Printf("Latency p50 / p99 in ms, by pods of the population:\n")
	for _, row := range []struct {
		name string
		of   func(size) latency
	}{{"bridge (kube-apiserver)", func(s size) latency { return s.Bridge }}, {"admission plugin (ours)", func(s size) latency { return s.Admission }}} {
		fmt.Printf("  %-28s", row.name)
		for _, s := range r.Sizes {
			l := row.of(s)
			fmt.Printf(" %17s", fmt.Sprintf("%.1f / %.1f", l.P50Seconds*1000, l.P99Seconds*1000))
		}
		fmt.Println()
	}
	fmt.Printf("At %d pods: CPU while idle (cores); start-up to ready / to caches synced (s):\n", r.Sizes[len(r.Sizes)-1].Pods)
	for _, name := range watched {
		fmt.Printf("  %-28s %6.3f", name, r.Idle[name])
		if s, ok := r.StartUp[name]; ok {
			fmt.Printf("  %6.1f / %.1f s", s.Ready, s.Synced)
		}
		fmt.Println()
	}
}

// printDrainCPU prints the CPU seconds of each process during the drains
// of kind at each size, for the processes that used a tenth of a second or
// more at one of them.
func (r *result) printDrainCPU(kind string) {
	var names []string
	for _, s := range r.Sizes {
		for name, seconds := range s.Drains[kind].CPU {
			if seconds >= 0.1 && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	fmt.Printf("CPU seconds of the drain %s by process, by pods of the population:\n", kind)
	totals := make([]float64, len(r.Sizes))
	for _, name := range names {
		fmt.Printf("  %-28s", name)
		for i, s := range r.Sizes {
			fmt.Printf(" %17.2f", s.Drains[kind].CPU[name])
			totals[i] += s.Drains[kind].CPU[name]
		}
		fmt.Println()
	}
	fmt.Printf("  %-28s", "total")
	for _, t := range totals {
		fmt.Printf(" %17.2f", t)
	}
	fmt.Println()
}

// ratio is a / b, 0 when b is not positive (a slope the run could not
// measure).
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
