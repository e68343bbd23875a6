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
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// The kinds of fault of the schedule, on our API's control plane.
const (
	faultKillServer   = "kill-server"
	faultFreezeServer = "freeze-server"
	faultKillEtcd     = "kill-etcd-member"
	// faultRestartKubeAPIServer ends kube-apiserver (SIGKILL or SIGTERM,
	// half and half) and starts it again with the same flags.
	faultRestartKubeAPIServer = "restart-kube-apiserver"
	// faultFreezeEtcd freezes every member of the server's etcd at once:
	// the replicas' storage is unreachable for a few seconds.
	faultFreezeEtcd = "freeze-server-etcd"
	// faultCutServerPath cuts the path from kube-apiserver to the replicas
	// at their load balancer for a few seconds.
	faultCutServerPath = "cut-server-path"
)

// The kinds of fault of the schedule on lifecycle.k8s.io's control plane,
// where the objects live in kube-apiserver's etcd.
const (
	// faultKillController ends the leading replica of
	// evictionrequest-controller with SIGKILL and starts it again, as the
	// kubelet restarts its container; another replica takes over (with
	// --workload-replicas=1, the restarted one).
	faultKillController = "kill-controller"
	// faultFreezeController freezes the leading replica of
	// evictionrequest-controller past its 15 s lease, then thaws it: another
	// took its Lease over (with --workload-replicas=1, nobody led meanwhile),
	// and it finds its term over.
	faultFreezeController = "freeze-controller"
	// faultRestartKubeEtcd ends kube-apiserver's etcd with SIGKILL and
	// starts it again from its data.
	faultRestartKubeEtcd = "restart-kube-etcd"
	// faultKillSurge ends the leading replica of the surge interceptor (on
	// either API) with SIGKILL and starts it again.
	faultKillSurge = "kill-surge-interceptor"
	// faultKillUpstream and faultFreezeUpstream do the same to Kubernetes
	// 1.38's eviction request controllers.
	faultKillUpstream   = "kill-upstream-controllers"
	faultFreezeUpstream = "freeze-upstream-controllers"
)

// schedule is n faults drawn from kinds, in order: every kind once when n
// allows, the rest drawn at random, all shuffled, from r alone, so that a
// seed gives the same schedule on every run.
func schedule(r *rand.Rand, kinds []string, n int) []string {
	var drawn []string
	if n >= len(kinds) {
		drawn = append(drawn, kinds...)
	}
	for len(drawn) < n {
		drawn = append(drawn, kinds[r.IntN(len(kinds))])
	}
	r.Shuffle(len(drawn), func(i, j int) { drawn[i], drawn[j] = drawn[j], drawn[i] })
	return drawn
}

// injector injects faults on a seeded schedule and records each.
type injector struct {
	cluster *localcluster.Cluster
	record  *history.Writer
	rand    *rand.Rand
	// interval is the mean time between two faults; freeze how long a
	// frozen server stays frozen (past its lease); outage how long the
	// server's etcd stays frozen and the path to the replicas stays cut.
	interval, freeze, outage time.Duration
	// counts and failed count the faults injected, and those that could
	// not be injected or healed, per kind.
	counts, failed map[string]int
}

// run injects the faults of the schedule, one every interval or so, and
// returns once the last one is healed.
func (in *injector) run(ctx context.Context, kinds []string) {
	logger := klog.FromContext(ctx)
	for _, kind := range kinds {
		wait := in.interval/2 + time.Duration(in.rand.Int64N(int64(in.interval)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err := in.inject(ctx, kind); err != nil {
			logger.Error(err, "Injecting a fault", "kind", kind)
			_ = in.record.Fault(history.Fault{Kind: kind, Target: "-", Detail: "failed: " + err.Error()})
			in.failed[kind]++
			continue
		}
		in.counts[kind]++
	}
}

// faults is how the injector injects each kind of fault.
func (in *injector) faults() map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		faultKillServer: in.killServer, faultFreezeServer: in.freezeServer, faultKillEtcd: in.killServerEtcdMember,
		faultRestartKubeAPIServer: in.restartKubeAPIServer, faultFreezeEtcd: in.freezeEtcd, faultCutServerPath: in.cutServerPath,
		faultKillController: in.killController, faultFreezeController: in.freezeController, faultRestartKubeEtcd: in.restartKubeEtcd,
		faultKillUpstream: in.killUpstream, faultFreezeUpstream: in.freezeUpstream, faultKillSurge: in.killSurge,
	}
}

func (in *injector) inject(ctx context.Context, kind string) error {
	fault, ok := in.faults()[kind]
	if !ok {
		return fmt.Errorf("unknown fault %q", kind)
	}
	return fault(ctx)
}

func (in *injector) killServer(ctx context.Context) error {
	i, target, err := in.leaderOf(ctx, in.cluster.LeaderReplica, serverReplica)
	if err != nil {
		return err
	}
	s := in.cluster.Replicas()[i]
	return in.killAndRestart(ctx, s.Process, target, func(ctx context.Context) error { return in.cluster.RestartServers(ctx, s) })
}

// killAndRestart ends p with SIGKILL, as a crash would, and starts it
// again with restart, recording both against target.
func (in *injector) killAndRestart(ctx context.Context, p *localcluster.Process, target string, restart func(context.Context) error) error {
	_ = in.record.Fault(history.Fault{Kind: "SIGKILL", Target: target})
	p.Kill()
	err := restart(ctx)
	_ = in.record.Fault(history.Fault{Kind: "restarted", Target: target})
	return err
}

func (in *injector) freezeServer(ctx context.Context) error {
	i, target, err := in.leaderOf(ctx, in.cluster.LeaderReplica, serverReplica)
	if err != nil {
		return err
	}
	return in.freezeProcess(ctx, in.cluster.Replicas()[i].Process, target)
}

// freezeProcess freezes p for the freeze time, then thaws it.
func (in *injector) freezeProcess(ctx context.Context, p *localcluster.Process, target string) error {
	_ = in.record.Fault(history.Fault{Kind: "SIGSTOP", Target: target, Detail: in.freeze.String()})
	if err := p.Freeze(); err != nil {
		return err
	}
	in.sleep(ctx, in.freeze)
	err := p.Thaw()
	_ = in.record.Fault(history.Fault{Kind: "SIGCONT", Target: target})
	return err
}

func (in *injector) killServerEtcdMember(ctx context.Context) error {
	members := in.cluster.ServerEtcd()
	i := in.rand.IntN(len(members))
	return in.restartEtcd(ctx, members[i], fmt.Sprintf("server etcd member %d", i))
}

func (in *injector) restartKubeEtcd(ctx context.Context) error {
	return in.restartEtcd(ctx, in.cluster.KubeEtcd(), "kube-apiserver's etcd")
}

// restartEtcd kills an etcd member and starts it again from its data.
func (in *injector) restartEtcd(ctx context.Context, m *localcluster.EtcdMember, target string) error {
	return in.killAndRestart(ctx, m.Process, target, func(ctx context.Context) error { return in.cluster.RestartEtcdMember(ctx, m) })
}

func (in *injector) restartKubeAPIServer(ctx context.Context) error {
	sig := []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM}[in.rand.IntN(2)]
	_ = in.record.Fault(history.Fault{Kind: unix.SignalName(sig), Target: "kube-apiserver"})
	err := in.cluster.RestartKubeAPIServer(ctx, sig)
	_ = in.record.Fault(history.Fault{Kind: "restarted", Target: "kube-apiserver"})
	return err
}

func (in *injector) cutServerPath(ctx context.Context) error {
	_ = in.record.Fault(history.Fault{Kind: "cut", Target: "kube-apiserver to evictionrequest-apiserver", Detail: in.outage.String()})
	if err := in.cluster.CutServerPath(); err != nil {
		return err
	}
	in.sleep(ctx, in.outage)
	in.cluster.HealServerPath()
	_ = in.record.Fault(history.Fault{Kind: "healed", Target: "kube-apiserver to evictionrequest-apiserver"})
	return nil
}

// killController ends the replica of evictionrequest-controller that
// leads, as a crash would: another takes its Lease over, and the one
// killed starts again, as the kubelet restarts its container.
func (in *injector) killController(ctx context.Context) error {
	return in.killLeader(ctx, in.cluster.LifecycleControllerReplicas(), "evictionrequest-controller")
}

// killSurge does the same to the surge interceptor.
func (in *injector) killSurge(ctx context.Context) error {
	return in.killLeader(ctx, in.cluster.SurgeInterceptorReplicas(), "surge-interceptor")
}

// killLeader ends the leader of r, the replicas of the workload what,
// with SIGKILL, starts it again, and records which replica leads after:
// none within leaderWait fails the fault.
func (in *injector) killLeader(ctx context.Context, r *localcluster.Replicas, what string) error {
	if r == nil {
		return fmt.Errorf("the cluster runs no %s", what)
	}
	i, target, err := in.leaderOf(ctx, r.Leader, what)
	if err != nil {
		return err
	}
	if err := in.killAndRestart(ctx, r.Processes()[i], target, func(ctx context.Context) error { return r.Restart(ctx, i) }); err != nil {
		return err
	}
	return in.recordLeader(ctx, r, what)
}

// freezeController freezes the replica of evictionrequest-controller that
// leads past its lease, thaws it, and records which replica leads after.
func (in *injector) freezeController(ctx context.Context) error {
	r := in.cluster.LifecycleControllerReplicas()
	if r == nil {
		return errors.New("the cluster runs no evictionrequest-controller")
	}
	i, target, err := in.leaderOf(ctx, r.Leader, "evictionrequest-controller")
	if err != nil {
		return err
	}
	if err := in.freezeProcess(ctx, r.Processes()[i], target); err != nil {
		return err
	}
	return in.recordLeader(ctx, r, "evictionrequest-controller")
}

// recordLeader waits for a replica of r to lead and records it: with two
// replicas, the record shows whether the Lease moved.
func (in *injector) recordLeader(ctx context.Context, r *localcluster.Replicas, what string) error {
	_, target, err := in.leaderOf(ctx, r.Leader, what)
	if err == nil {
		_ = in.record.Fault(history.Fault{Kind: "leads", Target: target})
	}
	return err
}

// killUpstream ends Kubernetes' eviction request controllers and starts
// them again, as kube-controller-manager restarted.
func (in *injector) killUpstream(ctx context.Context) error {
	p := in.cluster.UpstreamControllers()
	if p == nil {
		return errors.New("the cluster runs no Kubernetes eviction request controllers")
	}
	return in.killAndRestart(ctx, p, "Kubernetes' eviction request controllers", func(ctx context.Context) error {
		in.cluster.StopUpstreamControllers()
		return in.cluster.StartUpstreamControllers(ctx)
	})
}

func (in *injector) freezeUpstream(ctx context.Context) error {
	p := in.cluster.UpstreamControllers()
	if p == nil {
		return errors.New("the cluster runs no Kubernetes eviction request controllers")
	}
	return in.freezeProcess(ctx, p, "Kubernetes' eviction request controllers")
}

// leaderWait is how long a fault of a replica waits for one to lead: past
// a lost leader's 15 s lease and the election after it.
const leaderWait = 45 * time.Second

// serverReplica names our server's replicas in the record.
const serverReplica = "evictionrequest-apiserver"

// leaderOf is the replica of the workload what that a fault hits, by
// lead (the index of the replica that holds the workload's Lease, as its
// /metrics say, or -1), and how the record names it: the leader, whose
// work moves to another replica. While an election is under way it waits
// for one; none within leaderWait fails the fault, as a component that
// did not come back.
func (in *injector) leaderOf(ctx context.Context, lead func(context.Context) int, what string) (int, string, error) {
	deadline := time.Now().Add(leaderWait)
	for {
		if i := lead(ctx); i >= 0 {
			return i, fmt.Sprintf("%s replica %d, the leader", what, i), nil
		}
		if time.Now().After(deadline) {
			return 0, "", fmt.Errorf("no %s replica leads after %s", what, leaderWait)
		}
		in.sleep(ctx, time.Second)
		if ctx.Err() != nil {
			return 0, "", ctx.Err()
		}
	}
}

// freezeEtcd freezes every member of the server's etcd for outage, then
// thaws them all: every replica loses its storage at once.
func (in *injector) freezeEtcd(ctx context.Context) error {
	members := in.cluster.ServerEtcd()
	_ = in.record.Fault(history.Fault{Kind: "SIGSTOP", Target: "server etcd, every member", Detail: in.outage.String()})
	var errs []error
	for _, m := range members {
		errs = append(errs, m.Freeze())
	}
	in.sleep(ctx, in.outage)
	for _, m := range members {
		errs = append(errs, m.Thaw())
	}
	_ = in.record.Fault(history.Fault{Kind: "SIGCONT", Target: "server etcd, every member"})
	return errors.Join(errs...)
}

// sleep waits d or until ctx ends: a fault is healed even when the run is
// interrupted.
func (in *injector) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
