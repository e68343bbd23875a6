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
	"crypto/tls"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// stopWithin bounds how long a server may take to stop: the watches' grace
// period and the HTTP server's shutdown after it, with room for a busy
// machine. A server that waits for its request timeout (a minute) fails.
const stopWithin = 20 * time.Second

// An HTTP/2 connection the server accepted just before it began to shut
// down, whose TLS handshake ended only after that, never gets the GOAWAY
// frame the others get (the HTTP/2 server registers it too late), so its
// client keeps sending on it. The server must not wait for that connection
// until its request timeout: this is how a replica that got SIGTERM right
// after it started, while kube-apiserver was opening connections to it,
// took more than 20 s to exit.
func TestStopIsBoundedByAConnectionThatMissedTheGoAway(t *testing.T) {
	s := startServer(t, clusterPlugins)
	raw, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = raw.Close() }()
	stopped := make(chan time.Duration, 1)
	go func() { stopped <- s.stop(t) }()
	waitRefused(t, s.addr)

	// Only now does the accepted connection speak TLS and HTTP/2.
	config, err := rest.TLSConfigFor(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	config.NextProtos, config.ServerName = []string{"h2"}, "127.0.0.1"
	conn := tls.Client(raw, config)
	if err := conn.Handshake(); err != nil {
		t.Fatalf("the TLS handshake of the accepted connection: %v", err)
	}
	// net/http's replacement dials a connection of its own; this test must
	// speak on the one the server accepted before it began to stop.
	client, err := (&http2.Transport{}).NewClientConn(conn) //nolint:staticcheck // SA1019: see above
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	req, err := http.NewRequest(http.MethodGet, "https://"+s.addr+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := client.RoundTrip(req); err != nil {
		t.Logf("a request on the late connection: %v", err)
	} else {
		resp.Body.Close()
	}
	if took := <-stopped; took > stopWithin {
		t.Errorf("the server took %s to stop with a connection open that missed the GOAWAY, want at most %s", took, stopWithin)
	}
}

// waitRefused waits until the server stopped listening on addr.
func waitRefused(t *testing.T, addr string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true, nil
		}
		_ = conn.Close()
		return false, nil
	})
	if err != nil {
		t.Fatalf("the server still listens on %s: %v", addr, err)
	}
}

// The server is started and stopped again and again, each time less than
// half a second after it began to listen, while clients open connections
// and send requests, as kube-apiserver does to a replica that just
// started: it stops within stopWithin every time.
func TestStopRightAfterStartRepeatedly(t *testing.T) {
	for i := range 8 {
		s := launchServer(t, clusterPlugins)
		stopClients := hammer(t, s)
		waitListening(t, s.addr)
		time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
		took := s.stop(t)
		stopClients()
		t.Logf("start %d: stopped in %s", i, took)
		if took > stopWithin {
			t.Errorf("start %d: the server took %s to stop, want at most %s", i, took, stopWithin)
		}
	}
}

// waitListening waits until the server listens on addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, nil
		}
		_ = conn.Close()
		return true, nil
	})
	if err != nil {
		t.Fatalf("the server never listened on %s: %v", addr, err)
	}
}

// hammer sends requests to s from a few clients, each opening its own
// connections, until the returned function is called.
func hammer(t *testing.T, s *testServer) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		config := rest.CopyConfig(s.admin)
		config.Timeout = 2 * time.Second
		transport, err := rest.TransportFor(config)
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Transport: transport, Timeout: 2 * time.Second}
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				resp, err := client.Get("https://" + s.addr + "/apis/coordination.k8s.io/v1alpha1")
				if err == nil {
					resp.Body.Close()
				} else if errors.Is(err, net.ErrClosed) {
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
	}
}
