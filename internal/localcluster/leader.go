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
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// leaderMetric is the gauge of client-go's leader election that a process
// reports 1 while it holds its Lease (k8s.io/component-base's
// leader_election_master_status, by the Lease's name).
const leaderMetric = "leader_election_master_status"

// scrapeTimeout bounds one read of a replica's /metrics.
const scrapeTimeout = 5 * time.Second

// LeaderReplica is the index in Replicas of the server replica that holds
// its controllers' Lease, as the replicas' own /metrics say; -1 when none
// does, while an election is under way. A replica that cannot be read (it
// is down, frozen) holds no Lease that counts.
func (c *Cluster) LeaderReplica(ctx context.Context) (int, error) {
	for i, s := range c.Replicas() {
		leads, err := c.leads(ctx, s)
		if err != nil {
			continue
		}
		if leads {
			return i, nil
		}
	}
	return -1, nil
}

// leads reads server's /metrics for leaderMetric at 1.
func (c *Cluster) leads(ctx context.Context, server *Server) (bool, error) {
	client, err := rest.HTTPClientFor(c.ServerClientConfig(server))
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.URL()+"/metrics", nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s/metrics: %s", server.URL(), resp.Status)
	}
	return reportsLeader(resp.Body)
}

// reportsLeader is true when metrics, in Prometheus' text format, hold a
// sample of leaderMetric at 1.
func reportsLeader(metrics io.Reader) (bool, error) {
	scanner := bufio.NewScanner(metrics)
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, leaderMetric+"{") && !strings.HasPrefix(line, leaderMetric+" ") {
			continue
		}
		fields := strings.Fields(line)
		if fields[len(fields)-1] == "1" {
			return true, nil
		}
	}
	return false, scanner.Err()
}
