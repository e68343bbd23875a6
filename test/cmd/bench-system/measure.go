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
	"io"
	"net/http"
	"net/url"
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

var vmRSS = regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB$`)

// rssBytes is the resident memory of every process of the control plane:
// what the objects cost the machine, heap or not, garbage not yet returned
// included. Like cpuTime it spans every process, so each API's share is the
// growth while its objects are created.
func (b *bench) rssBytes() (int64, error) {
	var total int64
	for _, p := range b.cluster.Processes() {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
		if err != nil {
			return 0, fmt.Errorf("RSS of %s: %w", p.Name, err)
		}
		m := vmRSS.FindSubmatch(status)
		if m == nil {
			return 0, fmt.Errorf("RSS of %s: no VmRSS in /proc status", p.Name)
		}
		kb, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			return 0, err
		}
		total += kb << 10
	}
	return total, nil
}

var heapAlloc = regexp.MustCompile(`(?m)^# HeapAlloc = (\d+)$`)

// holder is a process that holds objects of a target, and how to read its
// /debug/pprof.
type holder struct {
	name string
	// pprof GETs /debug/pprof/<kind> with params.
	pprof func(ctx context.Context, kind string, params map[string]string) ([]byte, error)
}

// apiServerHolder reads the pprof of the API server config reaches.
func apiServerHolder(name string, config *rest.Config) holder {
	return holder{name: name, pprof: func(ctx context.Context, kind string, params map[string]string) ([]byte, error) {
		client, err := kubernetes.NewForConfig(config)
		if err != nil {
			return nil, err
		}
		request := client.Discovery().RESTClient().Get().AbsPath("/debug/pprof", kind)
		for k, v := range params {
			request.Param(k, v)
		}
		return request.DoRaw(ctx)
	}}
}

// etcdHolder reads the pprof of the etcd member at clientURL, which runs
// with --enable-pprof.
func etcdHolder(name, clientURL string, client *http.Client, timeout time.Duration) holder {
	return holder{name: name, pprof: func(ctx context.Context, kind string, params map[string]string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		query := url.Values{}
		for k, v := range params {
			query.Set(k, v)
		}
		request, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/debug/pprof/"+kind+"?"+query.Encode(), nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(request)
		if err != nil {
			return nil, err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		return body, err
	}}
}

// holders are the processes that hold t's objects: kube-apiserver and its
// etcd for both (the events of our controller are stored there too), and
// for ours our server (with its embedded etcd, as the default deployment
// runs it) and the etcd members it stores in when it runs with others.
func (b *bench) holders(t target) []holder {
	holders := []holder{apiServerHolder("kube-apiserver", b.admin), etcdHolder("etcd", b.cluster.KubeEtcd().ClientURL, b.cluster.KubeEtcd().HTTPClient(), b.o.timeout)}
	if t.ours {
		holders = append(holders, b.server())
		for _, m := range b.cluster.ServerEtcd() {
			holders = append(holders, etcdHolder(m.Name, m.ClientURL, m.HTTPClient(), b.o.timeout))
		}
	}
	return holders
}

// server is our server, reached directly, not through the aggregator.
func (b *bench) server() holder {
	return apiServerHolder("evictionrequest-apiserver", b.o.clientConfig(b.cluster.ServerClientConfig(b.cluster.EvictionServer())))
}

// heapBytes is the live heap of holders. Each is read twice, each time
// after a garbage collection: the first moves what sync.Pools hold (such as
// the buffer of the last LIST) to their victim caches, the second frees it,
// so that only what the objects keep alive is counted.
func (b *bench) heapBytes(ctx context.Context, holders ...holder) (int64, error) {
	var total int64
	for _, h := range holders {
		var body []byte
		for range 2 {
			var err error
			// gc=1 collects before the profile; debug=1 appends runtime.MemStats.
			if body, err = h.pprof(ctx, "heap", map[string]string{"gc": "1", "debug": "1"}); err != nil {
				return 0, fmt.Errorf("heap profile of %s: %w", h.name, err)
			}
		}
		m := heapAlloc.FindSubmatch(body)
		if m == nil {
			return 0, fmt.Errorf("heap profile of %s has no HeapAlloc", h.name)
		}
		n, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
