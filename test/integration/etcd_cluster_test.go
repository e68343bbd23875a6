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

package integration

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/evictionrequest/apiserver/pkg/util/loopback"
)

// etcdMember is one member of a three-member etcd cluster run in the test
// process, which the test can stop and start again on its data.
type etcdMember struct {
	cfg  *embed.Config
	etcd *embed.Etcd
}

// startEtcdCluster starts an etcd cluster of size members on free loopback
// ports and stops them when the test ends.
func startEtcdCluster(t *testing.T, size int) []*etcdMember {
	t.Helper()
	ports, err := loopback.FreePorts(2 * size)
	if err != nil {
		t.Fatal(err)
	}
	loopbackURL := func(port int) url.URL { return url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(port)} }
	var initial []string
	for i := range size {
		peer := loopbackURL(ports[size+i])
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peer.String()))
	}
	dir := t.TempDir()
	members := make([]*etcdMember, size)
	for i := range members {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = filepath.Join(dir, cfg.Name)
		client, peer := loopbackURL(ports[i]), loopbackURL(ports[size+i])
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "integration"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		members[i] = &etcdMember{cfg: cfg}
	}
	// The members wait for each other's votes: start all, then wait.
	for _, m := range members {
		m.start(t)
	}
	for _, m := range members {
		m.waitReady(t)
	}
	t.Cleanup(func() {
		for _, m := range members {
			m.stop()
		}
	})
	return members
}

func (m *etcdMember) start(t *testing.T) {
	t.Helper()
	e, err := embed.StartEtcd(m.cfg)
	if err != nil {
		t.Fatalf("starting etcd member %s: %v", m.cfg.Name, err)
	}
	m.etcd = e
}

func (m *etcdMember) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-m.etcd.Server.ReadyNotify():
	case err := <-m.etcd.Err():
		t.Fatalf("etcd member %s: %v", m.cfg.Name, err)
	case <-time.After(time.Minute):
		t.Fatalf("etcd member %s not ready after a minute", m.cfg.Name)
	}
}

func (m *etcdMember) stop() {
	if m.etcd != nil {
		m.etcd.Close()
		m.etcd = nil
	}
}

func (m *etcdMember) isLeader() bool {
	return m.etcd != nil && m.etcd.Server.Leader() == m.etcd.Server.MemberID()
}

func (m *etcdMember) clientURL() string {
	u := m.cfg.AdvertiseClientUrls[0]
	return u.String()
}

// TestServesThroughTheLossOfAnEtcdMember runs the server on a three-member
// etcd, as the ha overlay deploys it, and stops the etcd leader: the API
// keeps serving reads and writes on the two members left, and the member,
// started again on its data, rejoins and catches up on what was written
// without it.
func TestServesThroughTheLossOfAnEtcdMember(t *testing.T) {
	members := startEtcdCluster(t, 3)
	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.clientURL())
	}
	s := startServer(t, clusterPlugins, "--etcd-servers="+strings.Join(endpoints, ","))
	ers := s.clientset(t).CoordinationV1alpha1().EvictionRequests(namespace)
	for i := range 5 {
		create(t, s.clientset(t), newEvictionRequest(100+i))
	}

	var leader *etcdMember
	for _, m := range members {
		if m.isLeader() {
			leader = m
		}
	}
	if leader == nil {
		t.Fatal("the etcd cluster has no leader")
	}
	leader.stop()

	// A new leader is elected within a few election timeouts; until then a
	// write may fail, after that none may.
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := ers.Create(ctx, newEvictionRequest(105), metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("no write succeeded after the etcd leader stopped: %v", err)
	}
	for i := 106; i < 110; i++ {
		create(t, s.clientset(t), newEvictionRequest(i))
	}
	list, err := ers.List(callContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list with a member down: %v", err)
	}
	if len(list.Items) != 10 {
		t.Errorf("%d EvictionRequests with a member down, want 10", len(list.Items))
	}

	// The member comes back on its data and catches up.
	leader.cfg.ClusterState = embed.ClusterStateFlagExisting
	leader.start(t)
	leader.waitReady(t)
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{leader.clientURL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		// A serializable read is answered from the member's own data;
		// everything the server stores is under its prefix.
		resp, err := client.Get(ctx, "/registry/coordination.k8s.io/", clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithSerializable())
		return err == nil && resp.Count == 10, nil
	})
	if err != nil {
		t.Errorf("the restarted member did not catch up on the 10 EvictionRequests: %v", err)
	}
}
