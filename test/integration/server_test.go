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

// Package integration runs evictionrequest-apiserver assembled in the test
// process, as Kubernetes' test/integration/examples runs sample-apiserver:
// the real options, handler chain, registry and storage on an embedded etcd,
// reached over HTTPS by client-go with client certificates, without building
// or starting any binary. What needs a cluster (pods, delegated
// authorization, the aggregator) is covered by test/e2e.
package integration

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	server "github.com/evictionrequest/apiserver/cmd/evictionrequest-apiserver/app"
	"github.com/evictionrequest/apiserver/internal/pki"
	clientset "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/util/loopback"
)

// clusterPlugins are the admission plugins that watch the cluster's
// namespaces, webhook configurations, quotas and pods; without a cluster they
// refuse every write, so the servers of this package turn them off unless a
// test asks for them.
const clusterPlugins = "NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy,ResourceQuota,EvictionRequest"

// testServer is one evictionrequest-apiserver running in the test process.
type testServer struct {
	// admin is in system:masters, which the server authorizes without a
	// cluster to ask.
	admin *rest.Config
	// stranger has a certificate of the trusted CA but no group.
	stranger *rest.Config
	// anonymous presents no credentials.
	anonymous *rest.Config
	// unknownCA presents a certificate the server does not trust.
	unknownCA *rest.Config
	// addr is the host:port the server listens on.
	addr string

	cancel context.CancelFunc
	done   chan struct{}
	runErr error
	// stopped is how long the server took to stop, once stopped.
	stopOnce sync.Once
	stopped  time.Duration
}

// stop cancels the server's context, as SIGTERM does, and returns how long
// the server took to return from RunServer, at most a minute.
func (s *testServer) stop(t *testing.T) time.Duration {
	t.Helper()
	s.stopOnce.Do(func() {
		begun := time.Now()
		s.cancel()
		select {
		case <-s.done:
			s.stopped = time.Since(begun)
			if s.runErr != nil {
				t.Errorf("server: %v", s.runErr)
			}
		case <-time.After(time.Minute):
			s.stopped = time.Minute
			t.Errorf("the server did not stop within a minute")
		}
	})
	return s.stopped
}

// startServer starts the server with extra flags on free loopback ports,
// waits until it is ready, and stops it, and its embedded etcd, when the
// test ends.
func startServer(t *testing.T, disabledPlugins string, flags ...string) *testServer {
	t.Helper()
	s := launchServer(t, disabledPlugins, flags...)
	s.waitReady(t)
	return s
}

// launchServer starts the server as startServer does, without waiting for
// it to be ready.
func launchServer(t *testing.T, disabledPlugins string, flags ...string) *testServer {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.NewAuthority("integration")
	if err != nil {
		t.Fatal(err)
	}
	caFile := writeFile(t, dir, "ca.crt", ca.CertPEM())
	serving := sign(t, ca, pki.Request{CommonName: "127.0.0.1", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Usage: x509.ExtKeyUsageServerAuth})
	ports, err := loopback.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}

	o := server.NewOptions()
	// There is no cluster to delegate to: client certificates of our CA
	// authenticate, system:masters is authorized, anything else is denied.
	o.RecommendedOptions.Authentication.RemoteKubeConfigFileOptional = true
	o.RecommendedOptions.Authorization.RemoteKubeConfigFileOptional = true
	fs := o.Flags()
	args := append([]string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		"--tls-cert-file=" + writeFile(t, dir, "serving.crt", serving.CertPEM),
		"--tls-private-key-file=" + writeFile(t, dir, "serving.key", serving.KeyPEM),
		"--client-ca-file=" + caFile,
		"--authentication-skip-lookup",
		// The pod informer of admission needs a kubeconfig; nothing listens
		// there, so pods never sync.
		"--kubeconfig=" + unreachableKubeconfig(t, dir),
		"--embedded-etcd-data-dir=" + filepath.Join(dir, "etcd"),
		"--controllers=",
		"--disable-admission-plugins=" + disabledPlugins,
		// Priority and fairness reads its configuration from the cluster.
		"--enable-priority-and-fairness=false",
	}, flags...)
	all := pflag.NewFlagSet("evictionrequest-apiserver", pflag.ContinueOnError)
	for _, named := range fs.FlagSets {
		all.AddFlagSet(named)
	}
	if err := all.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{addr: "127.0.0.1:" + strconv.Itoa(ports[0]), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.runErr = o.RunServer(ctx)
	}()
	t.Cleanup(func() { s.stop(t) })

	host := "https://" + s.addr
	clientFor := func(req *pki.Request) *rest.Config {
		config := &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAData: ca.CertPEM()}, QPS: -1, Timeout: 30 * time.Second}
		if req != nil {
			req.Usage = x509.ExtKeyUsageClientAuth
			pair := sign(t, ca, *req)
			config.CertData, config.KeyData = pair.CertPEM, pair.KeyPEM
		}
		return config
	}
	s.admin = clientFor(&pki.Request{CommonName: "admin", Organization: []string{"system:masters"}})
	s.stranger = clientFor(&pki.Request{CommonName: "stranger"})
	s.anonymous, s.unknownCA = clientFor(nil), clientFor(nil)
	other, err := pki.NewAuthority("unknown")
	if err != nil {
		t.Fatal(err)
	}
	untrusted := sign(t, other, pki.Request{CommonName: "admin", Organization: []string{"system:masters"}, Usage: x509.ExtKeyUsageClientAuth})
	s.unknownCA.CertData, s.unknownCA.KeyData = untrusted.CertPEM, untrusted.KeyPEM
	return s
}

// waitReady waits for /readyz, or fails when the server exits first. The
// informers of the cluster never sync here, so their check is left out.
func (s *testServer) waitReady(t *testing.T) {
	t.Helper()
	client, err := rest.HTTPClientFor(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-s.done:
			return false, fmt.Errorf("the server exited: %v", s.runErr)
		default:
		}
		resp, err := client.Get(s.admin.Host + "/readyz?verbose&exclude=informer-sync")
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		last = string(body)
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("waiting for /readyz: %v\n%s", err, last)
	}
}

// clientset returns the generated clientset of the admin.
func (s *testServer) clientset(t *testing.T) clientset.Interface {
	t.Helper()
	c, err := clientset.NewForConfig(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sign(t *testing.T, ca *pki.Authority, req pki.Request) *pki.KeyPair {
	t.Helper()
	req.Validity = time.Hour
	pair, err := ca.Sign(req)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// unreachableKubeconfig points at a loopback port nobody listens on.
func unreachableKubeconfig(t *testing.T, dir string) string {
	t.Helper()
	ports, err := loopback.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["none"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:" + strconv.Itoa(ports[0]), InsecureSkipTLSVerify: true}
	config.AuthInfos["none"] = &clientcmdapi.AuthInfo{}
	config.Contexts["none"] = &clientcmdapi.Context{Cluster: "none", AuthInfo: "none"}
	config.CurrentContext = "none"
	path := filepath.Join(dir, "cluster.kubeconfig")
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	return path
}
