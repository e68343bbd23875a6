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
	"maps"
	"slices"
	"time"
)

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
	// DirectSeconds are the direct evictions of the same pods at the
	// plugin's rate (evict-node); RatioToDirect is ours over their median.
	DirectSeconds []float64 `json:"directEvictionsSeconds,omitempty"`
	DirectMedian  float64   `json:"directEvictionsMedianSeconds,omitempty"`
	RatioToDirect float64   `json:"ratioToDirectEvictions,omitempty"`
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
	// ServerWritesPerPod are, on our API, our server's write requests per
	// pod during the same drain: the plugin's, the controllers' and the
	// interceptors' writes of EvictionRequests.
	ServerWritesPerPod map[string]float64 `json:"serverWritesPerPod,omitempty"`
	// DirectWritesPerPod are the same for the direct evictions.
	DirectWritesPerPod map[string]float64 `json:"directEvictionsWritesPerPod,omitempty"`
	// CPUSeconds are, for kubectl evictionrequest drain ("ours") and, with
	// the baseline, the direct evictions, the median CPU seconds of one
	// drain by process, the drain command's own included.
	CPUSeconds map[string]map[string]float64 `json:"cpuSeconds,omitempty"`
	When       time.Time                     `json:"when"`
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
		fmt.Printf("  direct evictions (the limit)   %6.1f s  (%.1f-%.1f)\n", res.DirectMedian, slices.Min(res.DirectSeconds), slices.Max(res.DirectSeconds))
		fmt.Printf("  ratio to direct evictions      %6.2f\n", res.RatioToDirect)
	}
	if res.HeapPerEvictionBytes > 0 {
		fmt.Printf("  controller heap per Eviction   %6.1f KiB\n", res.HeapPerEvictionBytes/1024)
	}
	if res.Bridge != nil {
		res.Bridge.print()
	}
	if res.CPUSeconds != nil {
		printCPU(o.api, res.CPUSeconds[ours.name], res.CPUSeconds[direct.name])
	}
	fmt.Printf("kube-apiserver's writes per pod (last round):\n")
	fmt.Printf("  %-40s %8s %8s\n", "", "direct", "ours")
	keys := slices.Sorted(maps.Keys(res.WritesPerPod))
	for key := range res.DirectWritesPerPod {
		if _, ok := res.WritesPerPod[key]; !ok {
			keys = append(keys, key)
		}
	}
	for _, key := range keys {
		fmt.Printf("  %-40s %8.2f %8.2f\n", key, res.DirectWritesPerPod[key], res.WritesPerPod[key])
	}
	if res.ServerWritesPerPod != nil {
		fmt.Printf("evictionrequest-apiserver's writes per pod (last round):\n")
		for _, key := range slices.Sorted(maps.Keys(res.ServerWritesPerPod)) {
			fmt.Printf("  %-40s %8.2f\n", key, res.ServerWritesPerPod[key])
		}
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
