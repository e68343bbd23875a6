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
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/utils/ptr"
)

// EtcdMember is one member of an etcd cluster of the local control plane.
type EtcdMember struct {
	*Process
	// ClientURL is where clients reach the member.
	ClientURL string
	// TLS is the configuration of its clients when the member serves them
	// over TLS and verifies their certificates (the server's etcd in the ha
	// overlay); nil when it serves plain HTTP.
	TLS *tls.Config
	// healthURL is its /health, in plain HTTP on a port of its own.
	healthURL string
	args      []string
}

// HTTPClient is a client of the member's client URL, with the member's TLS.
func (m *EtcdMember) HTTPClient() *http.Client {
	if m.TLS == nil {
		return http.DefaultClient
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: m.TLS}}
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	members, err := c.startEtcdCluster(ctx, nil, "etcd")
	if err != nil {
		return err
	}
	c.etcd = members[0]
	return nil
}

// KubeEtcd is the etcd of kube-apiserver, for tests that freeze it and
// benchmarks that read its heap.
func (c *Cluster) KubeEtcd() *EtcdMember {
	return c.etcd
}

// ServerEtcd is the etcd cluster our server stores in when the deployed
// overlay runs one (the ha overlay's StatefulSet); empty when the server
// embeds its etcd.
func (c *Cluster) ServerEtcd() []*EtcdMember {
	return c.serverEtcd
}

// ServerEtcdURLs are the client URLs of ServerEtcd, as --etcd-servers lists them.
func (c *Cluster) ServerEtcdURLs() []string {
	var urls []string
	for _, m := range c.serverEtcd {
		urls = append(urls, m.ClientURL)
	}
	return urls
}

// startEtcdCluster starts an etcd cluster of one member per name, on free
// loopback ports and with its data under the cluster directory, with
// certificates for clients and peers when secure is set, and returns once
// every member is healthy: a member reports healthy only once the cluster
// has a leader, so all of them start before the first is waited for.
func (c *Cluster) startEtcdCluster(ctx context.Context, secure *memberTLS, names ...string) ([]*EtcdMember, error) {
	scheme := "http"
	if secure != nil {
		scheme = "https"
	}
	members := make([]*EtcdMember, len(names))
	peerURLs := make([]string, len(names))
	initialCluster := make([]string, len(names))
	for i, name := range names {
		ports, err := c.reservePorts(3)
		if err != nil {
			return nil, err
		}
		members[i] = &EtcdMember{ClientURL: loopbackURL(scheme, ports[0]), healthURL: loopbackURL("http", ports[2]) + "/health"}
		if secure != nil {
			members[i].TLS = secure.client
		}
		peerURLs[i] = loopbackURL(scheme, ports[1])
		initialCluster[i] = name + "=" + peerURLs[i]
	}
	for i, name := range names {
		m := members[i]
		m.args = []string{
			"--name=" + name,
			"--data-dir=" + c.path(name),
			"--listen-client-urls=" + m.ClientURL, "--advertise-client-urls=" + m.ClientURL,
			"--listen-peer-urls=" + peerURLs[i], "--initial-advertise-peer-urls=" + peerURLs[i],
			"--initial-cluster=" + strings.Join(initialCluster, ","),
			"--initial-cluster-token=" + names[0],
			"--listen-metrics-urls=" + strings.TrimSuffix(m.healthURL, "/health"),
			// /debug/pprof on the client URL, for the system benchmark's
			// heap of the etcds.
			"--enable-pprof",
			"--log-level=warn",
			// The cluster is thrown away after the run; fsync would only slow tests.
			"--unsafe-no-fsync",
		}
		if secure != nil {
			m.args = append(m.args, secure.args...)
		}
		var err error
		if m.Process, err = c.run(name, nil, "etcd", m.args...); err != nil {
			return nil, err
		}
	}
	for _, m := range members {
		if err := c.waitEtcdHealthy(ctx, m); err != nil {
			return nil, err
		}
	}
	return members, nil
}

// RestartEtcdMember starts member again with its flags and data, stopping
// it first (SIGTERM) if it still runs, and waits until it is healthy: a
// member of a cluster rejoins it from its data directory.
func (c *Cluster) RestartEtcdMember(ctx context.Context, member *EtcdMember) error {
	member.Stop()
	c.untrack(member.Process)
	p, err := c.run(member.Name, nil, "etcd", member.args...)
	if err != nil {
		return err
	}
	c.mu.Lock()
	member.Process = p
	c.mu.Unlock()
	return c.waitEtcdHealthy(ctx, member)
}

func (c *Cluster) waitEtcdHealthy(ctx context.Context, m *EtcdMember) error {
	return c.waitUntilReady(ctx, m.Process, m.Name, func(ctx context.Context) error {
		return httpGetOK(ctx, http.DefaultClient, m.healthURL, `"health":"true"`)
	})
}

// startServerEtcd runs the etcd StatefulSet of the deployed overlay, if it
// has one, as a local cluster of as many members, with the TLS its
// container's flags ask for.
func (c *Cluster) startServerEtcd(ctx context.Context) error {
	set, err := c.statefulSet(serverEtcdName)
	if err != nil || set == nil {
		return err
	}
	secure, err := c.pki.etcd.membersOf(set)
	if err != nil {
		return err
	}
	c.serverEtcd, err = c.startEtcdCluster(ctx, secure, etcdMemberNames(serverEtcdName, int(ptr.Deref(set.Spec.Replicas, 1)))...)
	return err
}

// etcdMemberNames are the member names of a StatefulSet of n replicas.
func etcdMemberNames(statefulSet string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", statefulSet, i)
	}
	return names
}
