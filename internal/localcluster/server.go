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
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/pkg/bridge"
)

const (
	// FieldManager is the field manager of what the harness applies; an
	// apply with it replaces what the harness applied before.
	FieldManager   = "localcluster"
	apiServiceName = "v1alpha1.coordination.k8s.io"
)

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// Server is one evictionrequest-apiserver process of the cluster.
type Server struct {
	*Process
	// Port is the loopback port it serves on.
	Port int
	args []string
}

// URL is where the server serves, bypassing the aggregator.
func (s *Server) URL() string {
	return loopbackURL("https", s.Port)
}

// ServerOptions describe an evictionrequest-apiserver process.
type ServerOptions struct {
	// Name names its log file and, with the embedded etcd, its data directory.
	Name string
	// Args are flags added to those that connect it to the cluster.
	Args []string
}

// serverEtcdName is the etcd StatefulSet of the ha overlay.
const serverEtcdName = "evictionrequest-etcd"

// startEvictionServer deploys our server as the overlay describes it: the
// etcd StatefulSet, if any, as a local etcd cluster, and as many server
// processes as the Deployment has replicas, which the APIService reaches
// through a load balancer when there are several.
func (c *Cluster) startEvictionServer(ctx context.Context) error {
	if err := c.renderManifests(); err != nil {
		return err
	}
	if err := c.applyManifests(ctx); err != nil {
		return err
	}
	w, err := c.workloadOf(serverName, serverName)
	if err != nil {
		return err
	}
	if err := c.startServerEtcd(ctx); err != nil {
		return err
	}
	for i := 0; i < w.replicas; i++ {
		name := serverName
		if w.replicas > 1 {
			name = fmt.Sprintf("%s-%d", serverName, i)
		}
		server, err := c.StartServer(ctx, ServerOptions{Name: name, Args: c.cfg.ServerArgs})
		if err != nil {
			return err
		}
		c.servers = append(c.servers, server)
	}
	port := c.servers[0].Port
	if len(c.servers) > 1 {
		if c.balancer, err = c.startBalancer(c.servers); err != nil {
			return err
		}
		port = c.balancer.port
	}
	if err := c.register(ctx, port); err != nil {
		return err
	}
	return c.waitAggregated(ctx, c.servers[0].Process)
}

// EvictionServer is the first replica of the server registered with the
// aggregator.
func (c *Cluster) EvictionServer() *Server {
	return c.servers[0]
}

// Replicas are the replicas of the server registered with the aggregator.
func (c *Cluster) Replicas() []*Server {
	return append([]*Server(nil), c.servers...)
}

// StartServer starts an evictionrequest-apiserver with the arguments the
// Deployment of the deployed overlay gives it, authenticated as its service
// account, serving on a free loopback port with the serving certificate and
// storing in a data directory of the cluster, and waits until it is ready.
func (c *Cluster) StartServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	w, err := c.workloadOf(serverName, serverName)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := c.writeKubeconfig(serverName, loopbackURL("https", c.apiPort), c.pki.evictionServer)
	if err != nil {
		return nil, err
	}
	ports, err := c.reservePorts(1)
	if err != nil {
		return nil, err
	}
	certFile, keyFile := c.pki.evictionServing.CertFile, c.pki.evictionServing.KeyFile
	if trust := c.trust(); trust.certFile != "" {
		certFile, keyFile = trust.certFile, trust.keyFile
	}
	replace := map[string]string{
		"bind-address":           "",
		"secure-port":            "",
		"kubeconfig":             "",
		"tls-cert-file":          certFile,
		"tls-private-key-file":   keyFile,
		"embedded-etcd-data-dir": c.path(opts.Name + "-etcd"),
		"cert-dir":               c.path(opts.Name + "-certs"),
	}
	maps.Copy(replace, c.bridgeArgs())
	if urls := c.ServerEtcdURLs(); len(urls) > 0 {
		replace["etcd-servers"] = strings.Join(urls, ",")
		if c.serverEtcd[0].TLS != nil {
			maps.Copy(replace, c.pki.etcd.serverArgs())
		}
	}
	args := c.withBridgeCAFile(localArgs(w.args, replace))
	// In a pod these come from the service account and the Service.
	args = append(args,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
	)
	args = append(args, opts.Args...)
	server := &Server{Port: ports[0], args: args}
	if server.Process, err = c.run(opts.Name, nil, "evictionrequest-apiserver", args...); err != nil {
		return nil, err
	}
	return server, c.waitServerReady(ctx, server)
}

// RestartServers stops the servers at once with SIGTERM, fails unless each
// exits cleanly, and starts them again with the same flags, port and data,
// then waits until they are ready and the aggregator serves our API. A
// server that already exited (a test killed it) is only started again.
func (c *Cluster) RestartServers(ctx context.Context, servers ...*Server) error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		select {
		case <-s.Done():
			continue
		default:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Stop()
			// SIGTERM must stop the server and its embedded etcd cleanly,
			// not run into the kill after the grace period.
			if err := s.Err(); err != nil {
				errs[i] = fmt.Errorf("%s did not exit cleanly on SIGTERM: %w (see %s)", s.Name, err, s.LogFile)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, s := range servers {
		c.untrack(s.Process)
		p, err := c.run(s.Name, nil, "evictionrequest-apiserver", s.args...)
		if err != nil {
			return err
		}
		c.mu.Lock()
		s.Process = p
		c.mu.Unlock()
	}
	for _, s := range servers {
		if err := c.waitServerReady(ctx, s); err != nil {
			return err
		}
	}
	return c.waitAggregated(ctx, servers[0].Process)
}

func (c *Cluster) waitServerReady(ctx context.Context, server *Server) error {
	client := c.servingClient()
	return c.waitUntilReady(ctx, server.Process, server.Name, func(ctx context.Context) error {
		return httpGetOK(ctx, client, server.URL()+"/readyz", "ok")
	})
}

// ServerClientConfig is an admin client configuration that talks to server
// directly, without the aggregator: the server trusts the cluster's client
// CA through delegated authentication.
func (c *Cluster) ServerClientConfig(server *Server) *rest.Config {
	config := rest.CopyConfig(c.AdminConfig)
	config.Host = server.URL()
	trust := c.trust()
	config.CAData = trust.caPEM
	config.ServerName = trust.serverName
	return config
}

// register points the aggregator at port, the server's or the load
// balancer's in front of the replicas: an ExternalName Service to localhost
// and the APIService of the overlay, which trusts the serving CA.
func (c *Cluster) register(ctx context.Context, port int) error {
	if _, err := c.Client.CoreV1().Services(serverNamespace).Create(ctx, externalNameService(localServiceName, port), metav1.CreateOptions{}); err != nil {
		return err
	}
	apiService, err := c.manifest("APIService", apiServiceName)
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedField(apiService.Object, localServiceName, "spec", "service", "name"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(apiService.Object, int64(port), "spec", "service", "port"); err != nil {
		return err
	}
	if err := c.Apply(ctx, []*unstructured.Unstructured{apiService}, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return err
	}
	return c.registerWebhooks(ctx, serverName, localServiceName)
}

// registerWebhooks applies the ValidatingWebhookConfigurations of the
// overlay whose webhooks call service, pointed at local, the Service of
// localhost that stands in for it.
func (c *Cluster) registerWebhooks(ctx context.Context, service, local string) error {
	var objects []*unstructured.Unstructured
	for _, webhook := range c.manifestsOf("ValidatingWebhookConfiguration") {
		if standsIn, err := c.standIn(ctx, webhook, service, local); err != nil {
			return err
		} else if standsIn {
			objects = append(objects, webhook)
		}
	}
	return c.Apply(ctx, objects, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
}

// standIn points the webhooks of a ValidatingWebhookConfiguration of the
// overlay that call service at the Service local, on the port the local
// Service names, and makes them trust the cluster's serving CA, as the
// APIService does; it is false when none calls service.
func (c *Cluster) standIn(ctx context.Context, config *unstructured.Unstructured, service, local string) (bool, error) {
	webhooks, _, err := unstructured.NestedSlice(config.Object, "webhooks")
	if err != nil {
		return false, err
	}
	found := false
	for _, w := range webhooks {
		webhook := w.(map[string]any)
		if name, _, _ := unstructured.NestedString(webhook, "clientConfig", "service", "name"); name != service {
			continue
		}
		found = true
		// The local Service's port is the process's own: the webhook calls
		// port 443 of it, which kube-apiserver resolves to localhost:443
		// for an ExternalName Service, so the port is set on the webhook.
		port, err := c.localServicePort(ctx, local)
		if err != nil {
			return false, err
		}
		for field, value := range map[string]any{"name": local, "port": int64(port)} {
			if err := unstructured.SetNestedField(webhook, value, "clientConfig", "service", field); err != nil {
				return false, err
			}
		}
		if err := unstructured.SetNestedField(webhook, base64.StdEncoding.EncodeToString(c.pki.servingCA.certPEM()), "clientConfig", "caBundle"); err != nil {
			return false, err
		}
		if policy := c.cfg.BridgeFailurePolicy; policy != "" && webhook["name"] == bridge.WebhookName {
			webhook["failurePolicy"] = string(policy)
		}
	}
	return found, unstructured.SetNestedSlice(config.Object, webhooks, "webhooks")
}

// localServicePort is the port of the local Service name.
func (c *Cluster) localServicePort(ctx context.Context, name string) (int, error) {
	svc, err := c.Client.CoreV1().Services(serverNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	return int(svc.Spec.Ports[0].Port), nil
}

// waitAggregated waits until kube-apiserver serves our API: the APIService
// is Available, and the aggregated OpenAPI v3 has our group version, which
// kubectl explain and server-side apply clients read. The aggregator fetches
// that spec in the background, after the APIService turns Available.
func (c *Cluster) waitAggregated(ctx context.Context, p *Process) error {
	if err := c.waitAPIServiceAvailable(ctx, p); err != nil {
		return err
	}
	return waitFor(ctx, p, "the aggregated OpenAPI v3 of coordination.k8s.io/v1alpha1", func(ctx context.Context) error {
		body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/openapi/v3").DoRaw(ctx)
		if err != nil {
			return err
		}
		var index struct {
			Paths map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(body, &index); err != nil {
			return err
		}
		if _, ok := index.Paths["apis/coordination.k8s.io/v1alpha1"]; !ok {
			return errors.New("not in /openapi/v3 yet")
		}
		return nil
	})
}

func (c *Cluster) waitAPIServiceAvailable(ctx context.Context, p *Process) error {
	return waitFor(ctx, p, "APIService "+apiServiceName, func(ctx context.Context) error {
		obj, err := c.Dynamic.Resource(apiServices).Get(ctx, apiServiceName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, condition := range conditions {
			condition, _ := condition.(map[string]interface{})
			if condition["type"] == "Available" {
				if condition["status"] == "True" {
					return nil
				}
				return fmt.Errorf("not available: %v: %v", condition["reason"], condition["message"])
			}
		}
		return errors.New("no Available condition yet")
	})
}
