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
	"strconv"
	"strings"
	"time"
)

// startUp restarts our server and evictionrequest-controller at the
// largest size and reports, for each, the seconds from its process's
// start to ready (the harness's readiness check: the server's /readyz,
// which waits for its informers, and the APIService's availability; the
// controller's /readyz).
func (b *bench) startUp(ctx context.Context) (map[string]float64, error) {
	res := map[string]float64{}
	if err := b.cluster.RestartServers(ctx, b.cluster.EvictionServer()); err != nil {
		return nil, err
	}
	ready := time.Now()
	started, err := processStart(b.cluster.EvictionServer().Pid())
	if err != nil {
		return nil, err
	}
	res["evictionrequest-apiserver"] = ready.Sub(started).Seconds()
	if err := b.cluster.RestartLifecycleController(ctx); err != nil {
		return nil, err
	}
	ready = time.Now()
	if started, err = processStart(b.cluster.LifecycleController().Pid()); err != nil {
		return nil, err
	}
	res["evictionrequest-controller"] = ready.Sub(started).Seconds()
	return res, nil
}

// processStart is when the process pid started: its age is the system's
// uptime (/proc/uptime) less its start time after boot (field 22 of
// /proc/<pid>/stat, in clock ticks), both to the hundredth of a second.
func processStart(pid int) (time.Time, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, err
	}
	uptime, err := os.ReadFile("/proc/uptime")
	now := time.Now()
	if err != nil {
		return time.Time{}, err
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	fields := strings.Fields(rest)
	// starttime is field 22; rest starts at field 3.
	if len(fields) < 20 {
		return time.Time{}, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, data)
	}
	ticks, err := strconv.ParseFloat(fields[19], 64)
	if err != nil {
		return time.Time{}, err
	}
	up, err := strconv.ParseFloat(strings.Fields(string(uptime))[0], 64)
	if err != nil {
		return time.Time{}, err
	}
	age := up - ticks/clockTicks
	return now.Add(-time.Duration(age * float64(time.Second))), nil
}
