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

package localcluster

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/evictionrequest/apiserver/internal/promtext"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// Replicas are the processes of one leader-elected Deployment of the
// overlay: Config.WorkloadReplicas of them, as the chart's replicas, one
// holding the Lease and the others waiting for it. When the Deployment
// serves the eviction API bridge, every replica serves it on a port of its
// own and kube-apiserver calls them through a load balancer, as through the
// chart's Service, so that the bridge outlives the loss of one replica.
type Replicas struct {
	c *Cluster
	// name is the Deployment, which also names its Lease (as the
	// workloads' flags default to); binary its command; logName names the
	// replicas' logs.
	name, binary, logName string
	pair                  *keyPair
	args                  []string
	// bridgePorts are the replicas' bridge ports and balancer the load
	// balancer in front of them, when there are several replicas and they
	// serve the bridge; a helm release's one replica serves it on the port
	// its Service names.
	bridgePorts []int
	balancer    *balancer

	mu    sync.Mutex
	procs []*Process
}

// startReplicated starts the replicas of the Deployment name (binary,
// authenticated with pair) with the extra flags args, each until ready.
func (c *Cluster) startReplicated(ctx context.Context, name, binary, logName string, pair *keyPair, args []string) (*Replicas, error) {
	r := &Replicas{c: c, name: name, binary: binary, logName: logName, pair: pair, args: args}
	n := max(1, c.cfg.WorkloadReplicas)
	if err := c.balanceBridge(r, n); err != nil {
		return nil, err
	}
	return r, r.start(ctx, n)
}

// start starts n replicas, each until ready.
func (r *Replicas) start(ctx context.Context, n int) error {
	r.mu.Lock()
	r.procs = make([]*Process, n)
	r.mu.Unlock()
	for i := range n {
		p, err := r.c.startWorkload(ctx, r.name, r.binary, r.pair, r.options(i, r.logName))
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.procs[i] = p
		r.mu.Unlock()
	}
	return nil
}

// stop stops every replica.
func (r *Replicas) stop() {
	for _, p := range r.Processes() {
		p.Stop()
		r.c.untrack(p)
	}
}

// balanceBridge puts a load balancer in front of the n replicas of r when
// there are several and they serve the eviction API bridge.
func (c *Cluster) balanceBridge(r *Replicas, n int) error {
	w, err := c.workloadOf(r.name, r.name)
	if err != nil || n == 1 || !runsController(w.args, bridge.Name) {
		return err
	}
	ports, err := c.reservePorts(n + 1)
	if err != nil {
		return err
	}
	r.bridgePorts = ports[:n]
	// A replica's readiness, as the chart's readiness probe reads it, is
	// its /readyz beside its /metrics, not on the bridge's port.
	r.balancer, err = listenBalancer(ports[n], r.bridgePorts, func(ctx context.Context, port int) bool {
		p := r.onBridgePort(port)
		if p == nil {
			return false
		}
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		return httpGetOK(ctx, probeClient, strings.TrimSuffix(p.MetricsURL, "/metrics")+"/readyz", "ok") == nil
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.balancers = append(c.balancers, r.balancer)
	c.mu.Unlock()
	return nil
}

// options are the WorkloadOptions of replica i, its log named after
// logName.
func (r *Replicas) options(i int, logName string) WorkloadOptions {
	opts := WorkloadOptions{Name: logName, Args: r.args}
	if len(r.procs) > 1 {
		opts.Name = fmt.Sprintf("%s-%d", logName, i)
	}
	if i < len(r.bridgePorts) {
		opts.BridgePort = r.bridgePorts[i]
	}
	if r.balancer != nil {
		opts.WebhookPort = r.balancer.port
	}
	return opts
}

// onBridgePort is the replica that serves the bridge on port, nil while
// none does.
func (r *Replicas) onBridgePort(port int) *Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, p := range r.bridgePorts {
		if p == port {
			return r.procs[i]
		}
	}
	return nil
}

// Processes are the replicas' current processes, in a fixed order.
func (r *Replicas) Processes() []*Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Process(nil), r.procs...)
}

// Restart stops replica i with SIGTERM, if it still runs, and starts it
// again, as the Deployment's controller replaces a pod; it returns once
// the new process is ready.
func (r *Replicas) Restart(ctx context.Context, i int) error {
	r.mu.Lock()
	args := r.args
	r.mu.Unlock()
	return r.restartWith(ctx, i, args)
}

// restartWith is Restart with the extra flags args in place of the
// replicas' last ones.
func (r *Replicas) restartWith(ctx context.Context, i int, args []string) error {
	c := r.c
	old := r.Processes()[i]
	old.Stop()
	c.untrack(old)
	r.mu.Lock()
	r.args = args
	opts := r.options(i, r.logName+"-restarted")
	r.mu.Unlock()
	p, err := c.startWorkload(ctx, r.name, r.binary, r.pair, opts)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.procs[i] = p
	r.mu.Unlock()
	return nil
}

// Leader is the index in Processes of the replica that holds the
// Deployment's Lease, as the replicas' own /metrics say; -1 when none does
// (soleLeader).
func (r *Replicas) Leader(ctx context.Context) int {
	sample := leaderSample(r.name)
	procs := r.Processes()
	return soleLeader(len(procs), func(i int) bool {
		samples, err := promtext.Get(ctx, procs[i].MetricsClient, procs[i].MetricsURL, scrapeTimeout)
		v, ok := samples.Value(sample)
		return err == nil && ok && v == 1
	})
}
