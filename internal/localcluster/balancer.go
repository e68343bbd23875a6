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
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// probePeriod is how often the balancer checks each replica's /readyz,
	// as a readiness probe would (faster than the overlay's 5 s, since the
	// tests measure takeovers in seconds).
	probePeriod = 500 * time.Millisecond
	// probeTimeout fails the probe of a replica that does not answer, one
	// that is frozen for instance.
	probeTimeout = time.Second
	// dialTimeout bounds connecting to one replica before trying the next.
	dialTimeout = 2 * time.Second
)

// balancer stands in for the Service of the server's replicas: it hands
// each connection the aggregator opens to the next ready replica, in turn,
// as a Service's virtual IP would, and stops handing connections to a
// replica once its readiness probe fails. The aggregator keeps its
// connections open, so a replica that dies takes its connections with it
// and the aggregator's next ones go to the replicas left.
type balancer struct {
	port     int
	listener net.Listener
	backends []*backend
	// probe tells whether the replica on a port is ready.
	probe func(ctx context.Context, port int) bool
	next  atomic.Uint32

	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	// isCut is set while the path is cut: no connection is admitted.
	isCut bool
}

var (
	// errBalancerClosed refuses a connection once the balancer closed.
	errBalancerClosed = errors.New("the balancer closed")
	// errPathCut refuses a connection while the path is cut.
	errPathCut = errors.New("the path to the replicas is cut")
)

// backend is one replica behind the balancer, on a loopback port.
type backend struct {
	port  int
	ready atomic.Bool
}

// startBalancer listens on a free loopback port and balances over servers,
// which are ready, probing their /readyz.
func (c *Cluster) startBalancer(servers []*Server) (*balancer, error) {
	ports, err := c.reservePorts(1)
	if err != nil {
		return nil, err
	}
	return c.startBalancerOn(ports[0], servers)
}

// startBalancerOn is startBalancer on port, which the cluster reserved.
func (c *Cluster) startBalancerOn(port int, servers []*Server) (*balancer, error) {
	client := c.servingClient()
	client.Timeout = probeTimeout
	probe := func(ctx context.Context, port int) bool {
		return httpGetOK(ctx, client, loopbackURL("https", port)+"/readyz", "ok") == nil
	}
	var backends []int
	for _, s := range servers {
		backends = append(backends, s.Port)
	}
	return listenBalancer(port, backends, probe)
}

// listenBalancer listens on the loopback port and balances over the
// backends' ports, each ready while probe says so.
func listenBalancer(port int, backends []int, probe func(ctx context.Context, port int) bool) (*balancer, error) {
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	return newBalancer(listener, backends, probe), nil
}

// newBalancer balances the connections listener accepts over the backend
// ports, which start out ready.
func newBalancer(listener net.Listener, ports []int, probe func(ctx context.Context, port int) bool) *balancer {
	ctx, cancel := context.WithCancel(context.Background())
	b := &balancer{port: listener.Addr().(*net.TCPAddr).Port, listener: listener, probe: probe, cancel: cancel, conns: map[net.Conn]struct{}{}}
	for _, port := range ports {
		be := &backend{port: port}
		be.ready.Store(true)
		b.backends = append(b.backends, be)
	}
	b.wg.Add(2)
	go func() {
		defer b.wg.Done()
		b.serve()
	}()
	go func() {
		defer b.wg.Done()
		b.probeLoop(ctx)
	}()
	return b
}

func (b *balancer) serve() {
	for {
		conn, err := b.listener.Accept()
		if err != nil {
			return // closed
		}
		if err := b.admit(conn); err != nil {
			refuse(conn)
			if errors.Is(err, errBalancerClosed) {
				return
			}
			continue
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer b.remove(conn)
			b.forward(conn)
		}()
	}
}

// forward connects conn to the first replica that accepts, ready ones in
// turn first, and copies both ways until either side closes. A replica
// whose probe fails is still tried last: serving from it beats refusing.
func (b *balancer) forward(conn net.Conn) {
	for _, be := range b.order() {
		upstream, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", be.port), dialTimeout)
		if err != nil {
			continue
		}
		if b.admit(upstream) != nil {
			_ = upstream.Close()
			return
		}
		defer b.remove(upstream)
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(upstream, conn); done <- struct{}{} }()
		go func() { _, _ = io.Copy(conn, upstream); done <- struct{}{} }()
		// Either side closing ends the connection: the aggregator then
		// opens a new one, to a live replica.
		<-done
		_ = conn.Close()
		_ = upstream.Close()
		<-done
		return
	}
}

// order lists the backends to try for a new connection: the ready ones
// starting from the next in turn, then the others.
func (b *balancer) order() []*backend {
	start := int(b.next.Add(1))
	var ready, unready []*backend
	for i := range b.backends {
		be := b.backends[(start+i)%len(b.backends)]
		if be.ready.Load() {
			ready = append(ready, be)
		} else {
			unready = append(unready, be)
		}
	}
	return append(ready, unready...)
}

func (b *balancer) probeLoop(ctx context.Context) {
	ticker := time.NewTicker(probePeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		for _, be := range b.backends {
			be.ready.Store(b.probe(ctx, be.port))
		}
	}
}

// admit tracks conn so that close and cut can end it; it fails once the
// balancer closed and while the path is cut. Checking the cut under the
// lock that cut takes lets no connection through once cut returned.
func (b *balancer) admit(conn net.Conn) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.conns == nil:
		return errBalancerClosed
	case b.isCut:
		return errPathCut
	}
	b.conns[conn] = struct{}{}
	return nil
}

// refuse resets conn (no linger: the client reads a reset, not an end of
// stream), as a Service without endpoints refuses.
func refuse(conn net.Conn) {
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// cut ends every connection through the balancer and refuses new ones
// until heal, as when every endpoint of the Service went away at once: the
// aggregator's connections (and the webhooks') to the replicas drop while
// the replicas themselves run on.
func (b *balancer) cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.isCut = true
	for conn := range b.conns {
		refuse(conn)
	}
}

// heal admits connections again after cut.
func (b *balancer) heal() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.isCut = false
}

func (b *balancer) remove(conn net.Conn) {
	_ = conn.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.conns, conn)
}

// close stops accepting, ends every connection and waits for the balancer's
// goroutines.
func (b *balancer) close() {
	b.cancel()
	_ = b.listener.Close()
	b.mu.Lock()
	for conn := range b.conns {
		_ = conn.Close()
	}
	b.conns = nil
	b.mu.Unlock()
	b.wg.Wait()
}

// CutServerPath ends every connection kube-apiserver holds to the server's
// replicas through their load balancer (the aggregator's and the
// webhooks') and refuses new ones until HealServerPath, as when every
// endpoint of the Service goes away at once; the replicas run on, their
// leases and their etcd untouched. It fails when the server has a single
// replica, which the aggregator reaches without the balancer.
func (c *Cluster) CutServerPath() error {
	if c.balancer == nil {
		return errors.New("the server has no load balancer: run the ha overlay")
	}
	c.balancer.cut()
	return nil
}

// HealServerPath lets kube-apiserver reach the server's replicas again
// after CutServerPath.
func (c *Cluster) HealServerPath() {
	if c.balancer != nil {
		c.balancer.heal()
	}
}
