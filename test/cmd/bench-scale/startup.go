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
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/evictionrequest/apiserver/internal/benchutil"
)

// startUp restarts our server and evictionrequest-controller at the
// largest size and reports, for each, the seconds from its process's start
// to ready (the harness's readiness check: the server's /readyz and the
// APIService's availability; the controller's /readyz, which answers once
// it serves) and to its controllers' caches synced (the last "Caches are
// synced" its log writes).
func (b *bench) startUp(ctx context.Context) (map[string]startUp, error) {
	res := map[string]startUp{}
	server := b.cluster.EvictionServer()
	if err := b.cluster.RestartServers(ctx, server); err != nil {
		return nil, err
	}
	s, err := measureStartUp(ctx, server.Pid(), server.LogFile)
	if err != nil {
		return nil, fmt.Errorf("evictionrequest-apiserver: %w", err)
	}
	res["evictionrequest-apiserver"] = s
	if err := b.cluster.RestartLifecycleController(ctx); err != nil {
		return nil, err
	}
	controller := b.cluster.LifecycleController()
	if s, err = measureStartUp(ctx, controller.Pid(), controller.LogFile); err != nil {
		return nil, fmt.Errorf("evictionrequest-controller: %w", err)
	}
	res["evictionrequest-controller"] = s
	return res, nil
}

// startUp is how long a process took to start, in seconds.
type startUp struct {
	Ready  float64 `json:"readySeconds"`
	Synced float64 `json:"cachesSyncedSeconds"`
}

// measureStartUp is called once the process pid is ready: it reads when
// the process started, then waits until its log at logFile has written
// no new "Caches are synced" for three seconds.
func measureStartUp(ctx context.Context, pid int, logFile string) (startUp, error) {
	ready := time.Now()
	started, err := benchutil.ProcessStart(pid)
	if err != nil {
		return startUp{}, err
	}
	var last time.Time
	stableSince := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		latest, err := lastCachesSynced(logFile, started)
		if err != nil {
			return false, err
		}
		if !latest.Equal(last) {
			last, stableSince = latest, time.Now()
		}
		return !last.IsZero() && time.Since(stableSince) >= 3*time.Second, nil
	})
	if err != nil {
		return startUp{}, fmt.Errorf("waiting for its caches to sync (%s): %w", logFile, err)
	}
	return startUp{Ready: ready.Sub(started).Seconds(), Synced: last.Sub(started).Seconds()}, nil
}

// lastCachesSynced is the time of the last "Caches are synced" line of
// the klog log at path written after since (the log may hold earlier
// incarnations' lines), zero when there is none.
func lastCachesSynced(path string, since time.Time) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	var last time.Time
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `"Caches are synced"`) || len(line) < 21 {
			continue
		}
		// klog's header: Lmmdd hh:mm:ss.uuuuuu, in UTC here, without a year.
		at, err := time.Parse("0102 15:04:05.000000", line[1:21])
		if err != nil {
			continue
		}
		at = at.AddDate(since.UTC().Year(), 0, 0)
		if !at.Before(since.UTC().Add(-time.Second)) && at.After(last) {
			last = at
		}
	}
	return last, nil
}
