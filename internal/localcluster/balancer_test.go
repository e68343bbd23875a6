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
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// namedBackend is a TCP server that greets every connection with its name
// and then echoes, until stopped.
type namedBackend struct {
	name     string
	listener net.Listener
	wg       sync.WaitGroup
}

func startNamedBackend(t *testing.T, name string) *namedBackend {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &namedBackend{name: name, listener: listener}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				defer func() { _ = conn.Close() }()
				if _, err := conn.Write([]byte(name + "\n")); err != nil {
					return
				}
				buf := make([]byte, 64)
				for {
					n, err := conn.Read(buf)
					if err != nil {
						return
					}
					if _, err := conn.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(b.stop)
	return b
}

// stop closes the listener: new connections are refused, as by a killed
// process. Open connections end when the client closes them.
func (b *namedBackend) stop() {
	_ = b.listener.Close()
}

func (b *namedBackend) port() int {
	return b.listener.Addr().(*net.TCPAddr).Port
}

// readiness is the probe of the balancer under test: every port is ready
// unless marked otherwise.
type readiness struct {
	mu      sync.Mutex
	unready map[int]bool
}

func (r *readiness) probe(_ context.Context, port int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.unready[port]
}

func (r *readiness) set(port int, ready bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unready[port] = !ready
}

func startTestBalancer(t *testing.T, r *readiness, backends ...*namedBackend) *balancer {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var ports []int
	for _, b := range backends {
		ports = append(ports, b.port())
	}
	b := newBalancer(listener, ports, r.probe)
	t.Cleanup(b.close)
	return b
}

// connectTo opens a connection through the balancer and returns it with
// the name of the backend that answered.
func connectTo(t *testing.T, b *balancer) (net.Conn, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", b.listener.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	name, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the greeting through the balancer: %v", err)
	}
	return conn, name[:len(name)-1]
}

// waitProbed waits until the balancer's probe has seen port as ready or not.
func waitProbed(t *testing.T, b *balancer, port int, ready bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, be := range b.backends {
			if be.port == port && be.ready.Load() == ready {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the probe did not see port %d as ready=%v", port, ready)
}

func TestBalancerTakesTurnsOverReadyBackends(t *testing.T) {
	a, c := startNamedBackend(t, "a"), startNamedBackend(t, "c")
	b := startTestBalancer(t, &readiness{unready: map[int]bool{}}, a, c)
	var got []string
	for range 4 {
		_, name := connectTo(t, b)
		got = append(got, name)
	}
	if got[0] == got[1] || got[0] != got[2] || got[1] != got[3] {
		t.Errorf("connections went to %v, want the two backends in turn", got)
	}
}

func TestBalancerAvoidsUnreadyAndDeadBackends(t *testing.T) {
	a, c := startNamedBackend(t, "a"), startNamedBackend(t, "c")
	r := &readiness{unready: map[int]bool{}}
	b := startTestBalancer(t, r, a, c)

	// An unready backend gets no new connection while another is ready.
	r.set(c.port(), false)
	waitProbed(t, b, c.port(), false)
	for range 3 {
		if _, name := connectTo(t, b); name != "a" {
			t.Errorf("a connection went to %s, which is not ready", name)
		}
	}

	// With the ready one dead, the unready one serves rather than nobody.
	a.stop()
	for range 2 {
		if _, name := connectTo(t, b); name != "c" {
			t.Errorf("a connection went to %s, want c, the only one that accepts", name)
		}
	}
}

func TestBalancerCloseEndsItsConnections(t *testing.T) {
	a := startNamedBackend(t, "a")
	b := startTestBalancer(t, &readiness{unready: map[int]bool{}}, a)
	conn, _ := connectTo(t, b)
	b.close()
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("a connection through the closed balancer still reads")
	}
	if conn, err := net.DialTimeout("tcp", b.listener.Addr().String(), time.Second); err == nil {
		_ = conn.Close()
		t.Error("the closed balancer still accepts connections")
	}
}

// refused reports how a connection through the balancer fares that must
// be refused: nil when it is served instead.
func refused(t *testing.T, b *balancer) error {
	t.Helper()
	conn, err := net.DialTimeout("tcp", b.listener.Addr().String(), time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = bufio.NewReader(conn).ReadString('\n')
	return err
}

func TestBalancerCutEndsConnectionsAndRefusesNewOnesUntilHealed(t *testing.T) {
	a, c := startNamedBackend(t, "a"), startNamedBackend(t, "c")
	b := startTestBalancer(t, &readiness{unready: map[int]bool{}}, a, c)
	open, _ := connectTo(t, b)

	b.cut()
	_ = open.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil || os.IsTimeout(err) {
		t.Errorf("a connection opened before the cut still reads (err %v), want it ended", err)
	}
	for range 2 {
		if err := refused(t, b); err == nil || os.IsTimeout(err) {
			t.Errorf("a connection during the cut got %v, want it refused", err)
		}
	}

	b.heal()
	for range 2 {
		if _, name := connectTo(t, b); name != "a" && name != "c" {
			t.Errorf("a connection after the heal went to %q", name)
		}
	}
}
