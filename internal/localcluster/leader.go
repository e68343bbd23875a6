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
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/internal/promtext"
)

// leaderSample is the gauge of client-go's leader election
// (k8s.io/component-base's leader_election_master_status) that a process
// reports 1 while it holds the Lease name: a server replica its
// controllers', a workload's replica its Deployment's.
func leaderSample(name string) string {
	return fmt.Sprintf("leader_election_master_status{name=%q}", name)
}

// scrapeTimeout bounds one read of a replica's /metrics.
const scrapeTimeout = 5 * time.Second

// LeaderReplica is the index in Replicas of the server replica that holds
// its controllers' Lease, as the replicas' own /metrics say; -1 when none
// does (soleLeader).
func (c *Cluster) LeaderReplica(ctx context.Context) int {
	servers := c.Replicas()
	return soleLeader(len(servers), func(i int) bool { return c.leads(ctx, servers[i]) })
}

// soleLeader is the one of n replicas that reports leading, by leads; -1
// when none does, while an election is under way, and when more than one
// does: a replica that was frozen past its lease reports leading until its
// renew deadline runs out, while another already holds the Lease. A
// replica that cannot be read (it is down, frozen) holds no Lease that
// counts.
func soleLeader(n int, leads func(i int) bool) int {
	leader := -1
	for i := range n {
		if !leads(i) {
			continue
		}
		if leader >= 0 {
			return -1
		}
		leader = i
	}
	return leader
}

// leads is true when server's /metrics reports its leaderSample at 1.
func (c *Cluster) leads(ctx context.Context, server *Server) bool {
	client, err := kubernetes.NewForConfig(c.ServerClientConfig(server))
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	body, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").Do(ctx).Raw()
	if err != nil {
		return false
	}
	v, ok := promtext.Samples(body).Value(leaderSample(serverName))
	return ok && v == 1
}
