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
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clockTicks is the unit of the CPU times of /proc/<pid>/stat (USER_HZ,
// 100 on Linux).
const clockTicks = 100

// cpuTime is the CPU (user and system) every process of the control plane
// used so far: both APIs share the cluster, so each phase's share is the
// difference over the phase, whichever process did the work.
func (b *bench) cpuTime() (time.Duration, error) {
	var total time.Duration
	for _, p := range b.cluster.Processes() {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
		if err != nil {
			return 0, fmt.Errorf("CPU of %s: %w", p.Name, err)
		}
		// The command name, in parentheses, may hold spaces; the fields
		// after it are fixed: utime and stime are the 12th and 13th.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 13 {
			return 0, fmt.Errorf("CPU of %s: short /proc stat %q", p.Name, stat)
		}
		for _, f := range fields[11:13] {
			ticks, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("CPU of %s: %w", p.Name, err)
			}
			total += time.Duration(ticks) * time.Second / clockTicks
		}
	}
	return total, nil
}

var heapAlloc = regexp.MustCompile(`(?m)^# HeapAlloc = (\d+)$`)

// holders are the servers that hold t's objects: kube-apiserver for both,
// and our server too for ours (its watch cache, and the controller's
// informer cache).
func (b *bench) holders(t target) []*rest.Config {
	if t.ours {
		return []*rest.Config{b.admin, b.server()}
	}
	return []*rest.Config{b.admin}
}

// server is an admin client configuration of our server, not through the
// aggregator.
func (b *bench) server() *rest.Config {
	return b.o.clientConfig(b.cluster.ServerClientConfig(b.cluster.EvictionServer()))
}

// heapBytes is the live heap of the servers of configs, after a garbage
// collection.
func (b *bench) heapBytes(ctx context.Context, configs ...*rest.Config) (int64, error) {
	var total int64
	for _, config := range configs {
		client, err := kubernetes.NewForConfig(config)
		if err != nil {
			return 0, err
		}
		// gc=1 collects before the profile; debug=1 appends runtime.MemStats.
		body, err := client.Discovery().RESTClient().Get().AbsPath("/debug/pprof/heap").Param("gc", "1").Param("debug", "1").DoRaw(ctx)
		if err != nil {
			return 0, fmt.Errorf("heap profile of %s: %w", config.Host, err)
		}
		m := heapAlloc.FindSubmatch(body)
		if m == nil {
			return 0, fmt.Errorf("heap profile of %s has no HeapAlloc", config.Host)
		}
		n, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
