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
	"path/filepath"
	"time"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// profiled are the cases whose drains are profiled with --profile-dir:
// ours against the limit.
func (c drainCase) profiled() bool {
	return c == ours || c == direct
}

// startProfiles starts CPU profiles of --profile-seconds of the servers
// a drain loads (kube-apiserver and its etcd; on our API our server and
// its etcd members), written to --profile-dir as <drain>-<process>.pprof.
// It returns nil when profiling is off or the case is not profiled.
func startProfiles(ctx context.Context, cluster *localcluster.Cluster, o options, name string, c drainCase) *benchutil.CPUProfiles {
	if o.profileDir == "" || !c.profiled() {
		return nil
	}
	// A profile takes its seconds; the call may take them and more.
	timeout := time.Duration(o.profileSeconds)*time.Second + time.Minute
	etcd := cluster.KubeEtcd()
	sources := []benchutil.PprofSource{
		benchutil.APIServerPprof("kube-apiserver", cluster.AdminConfig),
		benchutil.HTTPPprof("etcd", etcd.ClientURL, etcd.HTTPClient(), timeout),
	}
	if o.api == "coordination" {
		sources = append(sources, benchutil.APIServerPprof("evictionrequest-apiserver", cluster.ServerClientConfig(cluster.EvictionServer())))
		for _, m := range cluster.ServerEtcd() {
			sources = append(sources, benchutil.HTTPPprof(m.Name, m.ClientURL, m.HTTPClient(), timeout))
		}
	}
	return benchutil.StartCPUProfiles(ctx, sources, o.profileSeconds, func(s benchutil.PprofSource) string {
		return filepath.Join(o.profileDir, fmt.Sprintf("%s-%s.pprof", name, s.Name))
	})
}
