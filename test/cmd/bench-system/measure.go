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
	"regexp"
	"strconv"
	"time"

	"github.com/evictionrequest/apiserver/internal/benchutil"
)

// cpuTime is the CPU (user and system) every process of the control plane
// used so far: both APIs share the cluster, so each phase's share is the
// difference over the phase, whichever process did the work.
func (b *bench) cpuTime() (time.Duration, error) {
	var total float64
	for _, p := range b.cluster.Processes() {
		seconds, err := benchutil.CPUSeconds(p.Pid())
		if err != nil {
			return 0, fmt.Errorf("CPU of %s: %w", p.Name, err)
		}
		total += seconds
	}
	return time.Duration(total * float64(time.Second)), nil
}

// rssBytes is the resident memory of every process of the control plane:
// what the objects cost the machine, heap or not, garbage not yet returned
// included. Like cpuTime it spans every process, so each API's share is the
// growth while its objects are created.
func (b *bench) rssBytes() (int64, error) {
	var total int64
	for _, p := range b.cluster.Processes() {
		kib, err := benchutil.ProcStatusKiB(p.Pid(), "VmRSS")
		if err != nil {
			return 0, fmt.Errorf("RSS of %s: %w", p.Name, err)
		}
		total += int64(kib) << 10
	}
	return total, nil
}

var heapAlloc = regexp.MustCompile(`(?m)^# HeapAlloc = (\d+)$`)

// holders are the processes that hold t's objects: kube-apiserver and its
// etcd for both (the events of our controller are stored there too), and
// for ours our server (with its embedded etcd, as the default deployment
// runs it) and the etcd members it stores in when it runs with others.
func (b *bench) holders(t target) []benchutil.PprofSource {
	holders := []benchutil.PprofSource{benchutil.APIServerPprof("kube-apiserver", b.admin), benchutil.HTTPPprof("etcd", b.cluster.KubeEtcd().ClientURL, b.cluster.KubeEtcd().HTTPClient(), b.o.timeout)}
	if t.ours {
		holders = append(holders, b.server())
		for _, m := range b.cluster.ServerEtcd() {
			holders = append(holders, benchutil.HTTPPprof(m.Name, m.ClientURL, m.HTTPClient(), b.o.timeout))
		}
	}
	return holders
}

// server is our server, reached directly, not through the aggregator.
func (b *bench) server() benchutil.PprofSource {
	return benchutil.APIServerPprof("evictionrequest-apiserver", b.o.clientConfig(b.cluster.ServerClientConfig(b.cluster.EvictionServer())))
}

// heapBytes is the live heap of holders. Each is read twice, each time
// after a garbage collection: the first moves what sync.Pools hold (such as
// the buffer of the last LIST) to their victim caches, the second frees it,
// so that only what the objects keep alive is counted.
func (b *bench) heapBytes(ctx context.Context, holders ...benchutil.PprofSource) (int64, error) {
	var total int64
	for _, h := range holders {
		var body []byte
		for range 2 {
			var err error
			// gc=1 collects before the profile; debug=1 appends runtime.MemStats.
			if body, err = h.Get(ctx, "heap", map[string]string{"gc": "1", "debug": "1"}); err != nil {
				return 0, fmt.Errorf("heap profile of %s: %w", h.Name, err)
			}
		}
		m := heapAlloc.FindSubmatch(body)
		if m == nil {
			return 0, fmt.Errorf("heap profile of %s has no HeapAlloc", h.Name)
		}
		n, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
