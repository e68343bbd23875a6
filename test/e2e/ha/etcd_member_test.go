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

package ha

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// TestEtcdMemberKilledDuringADrain drains a node of 20 pods whose
// interceptor holds their requests, and kills the leader of the server's
// etcd meanwhile: the API goes on serving the interceptor's reads and
// heartbeats through the aggregator, the drain finishes with every pod
// evicted once, and the member, started again, rejoins and catches up.
func TestEtcdMemberKilledDuringADrain(t *testing.T) {
	const pods, holder = 20, "hold.e2e.example.com"
	ctx := t.Context()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	drained := createPods(t, ns, node, "web", holder, pods)
	hold := startHoldInterceptor(t, ns, holder)
	f.MarkForDrain(t, node, true)
	hold.waitHolding(t, pods)

	members := f.ServerEtcd()
	if len(members) != 3 {
		t.Fatalf("the server stores in %d etcd members, want the ha overlay's 3", len(members))
	}
	etcd := newEtcdClient(t, members)
	killed := etcdLeader(t, etcd, members)
	killedAt := time.Now()
	killed.Kill()
	restartIfDown(t, killed.Name, killed, func(ctx context.Context) error { return f.RestartEtcdMember(ctx, killed) })

	// Reads go on: the requests are all there.
	waitListed(t, ns, pods)
	read := time.Since(killedAt)
	// Writes go on: every held request heartbeated since the kill.
	framework.Eventually(t, 30*time.Second, "a heartbeat of every request since the kill", func(ctx context.Context) error {
		list, err := f.EvictionRequests(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, er := range list.Items {
			if er.Status.HeartbeatTime == nil || !er.Status.HeartbeatTime.After(killedAt) {
				return fmt.Errorf("%s last heartbeat %v", er.Name, er.Status.HeartbeatTime)
			}
		}
		return nil
	})
	t.Logf("with etcd member %s killed: the requests were listed %s and had all heartbeated %s after the kill",
		killed.Name, read.Round(100*time.Millisecond), time.Since(killedAt).Round(100*time.Millisecond))

	hold.releaseAll()
	waitEvictedOnce(t, drained)
	framework.Eventually(t, flowTimeout, "node "+node+" to be drained", func(ctx context.Context) error {
		n, err := f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeDrained && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not drained: %v", n.Status.Conditions)
	})

	// The member rejoins and catches up with what was written without it.
	if err := f.RestartEtcdMember(ctx, killed); err != nil {
		t.Fatalf("starting %s again: %v", killed.Name, err)
	}
	var want int64
	for _, m := range members {
		if m != killed {
			want = max(want, etcdStatus(t, etcd, m).Header.Revision)
		}
	}
	framework.Eventually(t, 30*time.Second, killed.Name+" to catch up", func(context.Context) error {
		if got := etcdStatus(t, etcd, killed).Header.Revision; got < want {
			return fmt.Errorf("at revision %d, the cluster at %d", got, want)
		}
		return nil
	})
}

// newEtcdClient is a client of the etcd members, closed when the test ends.
func newEtcdClient(t *testing.T, members []*localcluster.EtcdMember) *clientv3.Client {
	t.Helper()
	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.ClientURL)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, TLS: members[0].TLS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// etcdStatus is the status of one member, as that member reports it.
func etcdStatus(t *testing.T, client *clientv3.Client, m *localcluster.EtcdMember) *clientv3.StatusResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	status, err := client.Status(ctx, m.ClientURL)
	if err != nil {
		t.Fatalf("status of etcd member %s: %v", m.Name, err)
	}
	return status
}

// etcdLeader is the member that leads the etcd cluster.
func etcdLeader(t *testing.T, client *clientv3.Client, members []*localcluster.EtcdMember) *localcluster.EtcdMember {
	t.Helper()
	for _, m := range members {
		if status := etcdStatus(t, client, m); status.Leader == status.Header.MemberId {
			return m
		}
	}
	t.Fatal("no etcd member leads")
	return nil
}
