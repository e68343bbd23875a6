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
	"math/rand/v2"
	"time"

	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// The kinds of fault of the schedule.
const (
	faultKillServer   = "kill-server"
	faultFreezeServer = "freeze-server"
	faultKillEtcd     = "kill-etcd-member"
)

var faultKinds = []string{faultKillServer, faultFreezeServer, faultKillEtcd}

// injector injects faults on a seeded schedule and records each.
type injector struct {
	cluster *localcluster.Cluster
	record  *history.Writer
	rand    *rand.Rand
	// interval is the mean time between two faults; freeze how long a
	// frozen server stays frozen (past its lease).
	interval, freeze time.Duration
	counts           map[string]int
}

// run injects n faults, one every interval or so, and returns once the
// last one is healed.
func (in *injector) run(ctx context.Context, n int) {
	logger := klog.FromContext(ctx)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		wait := in.interval/2 + time.Duration(in.rand.Int64N(int64(in.interval)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		kind := faultKinds[in.rand.IntN(len(faultKinds))]
		if err := in.inject(ctx, kind); err != nil {
			logger.Error(err, "Injecting a fault", "kind", kind)
			_ = in.record.Fault(history.Fault{Kind: kind, Target: "-", Detail: "failed: " + err.Error()})
			continue
		}
		in.counts[kind]++
	}
}

func (in *injector) inject(ctx context.Context, kind string) error {
	switch kind {
	case faultKillServer:
		replicas := in.cluster.Replicas()
		i := in.rand.IntN(len(replicas))
		s := replicas[i]
		_ = in.record.Fault(history.Fault{Kind: "SIGKILL", Target: fmt.Sprintf("evictionrequest-apiserver replica %d", i)})
		s.Kill()
		<-s.Done()
		err := in.cluster.RestartServers(ctx, s)
		_ = in.record.Fault(history.Fault{Kind: "restarted", Target: fmt.Sprintf("evictionrequest-apiserver replica %d", i)})
		return err
	case faultFreezeServer:
		replicas := in.cluster.Replicas()
		i := in.rand.IntN(len(replicas))
		s := replicas[i]
		_ = in.record.Fault(history.Fault{Kind: "SIGSTOP", Target: fmt.Sprintf("evictionrequest-apiserver replica %d", i), Detail: in.freeze.String()})
		if err := s.Freeze(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(in.freeze):
		}
		err := s.Thaw()
		_ = in.record.Fault(history.Fault{Kind: "SIGCONT", Target: fmt.Sprintf("evictionrequest-apiserver replica %d", i)})
		return err
	case faultKillEtcd:
		members := in.cluster.ServerEtcd()
		i := in.rand.IntN(len(members))
		m := members[i]
		_ = in.record.Fault(history.Fault{Kind: "SIGKILL", Target: fmt.Sprintf("server etcd member %d", i)})
		m.Kill()
		<-m.Done()
		err := in.cluster.RestartEtcdMember(ctx, m)
		_ = in.record.Fault(history.Fault{Kind: "restarted", Target: fmt.Sprintf("server etcd member %d", i)})
		return err
	}
	return fmt.Errorf("unknown fault %q", kind)
}
