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
	"os/exec"
	"slices"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// drainCommandCPU is the key of the drain command's own CPU in a drain's
// CPU by process.
const drainCommandCPU = "(the drain command)"

// cpuSince is what each process used since before (a
// benchutil.CPUByProcess of the cluster), with the drain command's own
// CPU: both drains saturate the cores, so that what a drain through
// requests spends beyond the direct evictions, process by process, is
// where its time goes.
func cpuSince(cluster *localcluster.Cluster, before benchutil.CPUSample, cmd *exec.Cmd) map[string]float64 {
	used := benchutil.CPUSince(cluster.Processes(), before)
	if cmd.ProcessState != nil {
		used[drainCommandCPU] = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	return used
}

// medianCPU is, for each process, the median of its CPU over the rounds.
func medianCPU(rounds []map[string]float64) map[string]float64 {
	values := map[string][]float64{}
	for _, round := range rounds {
		for name, seconds := range round {
			values[name] = append(values[name], seconds)
		}
	}
	med := map[string]float64{}
	for name, v := range values {
		med[name] = median(v)
	}
	return med
}

// printCPU reports, process by process, the CPU of a drain through
// requests against the direct evictions of as many pods, or alone when
// they were not measured (nil).
func printCPU(api string, ours, direct map[string]float64) {
	fmt.Printf("CPU seconds of one drain by process, median (%s):\n", api)
	if direct == nil {
		fmt.Printf("  %-32s %8s\n", "process", "ours")
	} else {
		fmt.Printf("  %-32s %8s %8s %8s\n", "process", "direct", "ours", "ours-direct")
	}
	var totalOurs, totalDirect float64
	names := slices.Sorted(maps.Keys(ours))
	for name := range direct {
		if _, ok := ours[name]; !ok {
			names = append(names, name)
		}
	}
	row := func(name string, direct, ours float64, measured bool) {
		if !measured {
			fmt.Printf("  %-32s %8.2f\n", name, ours)
			return
		}
		fmt.Printf("  %-32s %8.2f %8.2f %+8.2f\n", name, direct, ours, ours-direct)
	}
	for _, name := range names {
		row(name, direct[name], ours[name], direct != nil)
		totalOurs += ours[name]
		totalDirect += direct[name]
	}
	row("total", totalDirect, totalOurs, direct != nil)
}
