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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/evictionrequest/apiserver/artifacts"
)

const (
	fieldManager   = "localcluster"
	apiServiceName = "v1alpha1.coordination.k8s.io"
)

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// manifestsForServer are the files of artifacts/deploy the local control
// plane applies as they are; the Service and APIService depend on where the
// server runs and are adapted.
var manifestsForServer = []string{"namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "user-roles.yaml"}

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

func (c *Cluster) startEvictionServer(ctx context.Context) error {
	for _, name := range manifestsForServer {
		if err := c.applyManifest(ctx, name, nil); err != nil {
			return err
		}
	}
	server, err := c.StartServer(ctx, ServerOptions{Name: serverName, Args: c.cfg.ServerArgs})
	if err != nil {
		return err
	}
	c.server = server
	if err := c.register(ctx, server.Port); err != nil {
		return err
	}
	return c.waitAggregated(ctx, server.Process)
}

// EvictionServer is the server registered with the aggregator.
func (c *Cluster) EvictionServer() *Server {
	return c.server
}

// StartServer starts an evictionrequest-apiserver authenticated as the
// service account of artifacts/deploy, serving on a free loopback port with
// a certificate of the serving CA, and waits until it is ready.
func (c *Cluster) StartServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	kubeconfig, err := c.writeKubeconfig(serverName, loopbackURL("https", c.apiPort), c.pki.evictionServer)
	if err != nil {
		return nil, err
	}
	ports, err := c.reservePorts(1)
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--tls-cert-file=" + c.pki.evictionServing.CertFile,
		"--tls-private-key-file=" + c.pki.evictionServing.KeyFile,
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--embedded-etcd-data-dir=" + c.path(opts.Name+"-etcd"),
	}, opts.Args...)
	server := &Server{Port: ports[0], args: args}
	if server.Process, err = c.run(opts.Name, nil, "evictionrequest-apiserver", args...); err != nil {
		return nil, err
	}
	return server, c.waitServerReady(ctx, server)
}

// RestartServer stops the registered server with SIGTERM, fails unless it
// exits cleanly, and starts it again with the same flags, port and data,
// then waits until the aggregator serves it again.
func (c *Cluster) RestartServer(ctx context.Context) error {
	old := c.server
	old.Stop()
	c.untrack(old.Process)
	// SIGTERM must stop the server and its embedded etcd cleanly, not run
	// into the kill after the grace period.
	if err := old.Err(); err != nil {
		return fmt.Errorf("%s did not exit cleanly on SIGTERM: %w (see %s)", old.Name, err, old.LogFile)
	}
	p, err := c.run(old.Name, nil, "evictionrequest-apiserver", old.args...)
	if err != nil {
		return err
	}
	c.server = &Server{Process: p, Port: old.Port, args: old.args}
	if err := c.waitServerReady(ctx, c.server); err != nil {
		return err
	}
	return c.waitAggregated(ctx, p)
}

func (c *Cluster) waitServerReady(ctx context.Context, server *Server) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.pki.servingCA.certPEM())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}}
	return waitFor(ctx, server.Process, server.Name, func(ctx context.Context) error {
		return httpGetOK(ctx, client, server.URL()+"/readyz", "ok")
	})
}

// ServerClientConfig is an admin client configuration that talks to server
// directly, without the aggregator: the server trusts the cluster's client
// CA through delegated authentication.
func (c *Cluster) ServerClientConfig(server *Server) *rest.Config {
	config := rest.CopyConfig(c.AdminConfig)
	config.Host = server.URL()
	config.TLSClientConfig.CAData = c.pki.servingCA.certPEM()
	config.TLSClientConfig.ServerName = "localhost"
	return config
}

// register points the aggregator at the server: an ExternalName Service to
// localhost (loopback addresses are invalid in Endpoints) and the APIService
// of artifacts/deploy, trusting the serving CA.
func (c *Cluster) register(ctx context.Context, port int) error {
	service := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: serverName, Namespace: serverNamespace},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports:        []corev1.ServicePort{{Name: "https", Port: int32(port)}},
		},
	}
	if _, err := c.Client.CoreV1().Services(serverNamespace).Create(ctx, service, metav1.CreateOptions{}); err != nil {
		return err
	}
	caBundle := base64.StdEncoding.EncodeToString(c.pki.servingCA.certPEM())
	return c.applyManifest(ctx, "apiservice.yaml", func(obj *unstructured.Unstructured) error {
		unstructured.RemoveNestedField(obj.Object, "spec", "insecureSkipTLSVerify")
		if err := unstructured.SetNestedField(obj.Object, caBundle, "spec", "caBundle"); err != nil {
			return err
		}
		return unstructured.SetNestedField(obj.Object, int64(port), "spec", "service", "port")
	})
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

// applyManifest applies every object of artifacts/deploy/<name> with
// server-side apply, after mutate adapts it.
func (c *Cluster) applyManifest(ctx context.Context, name string, mutate func(*unstructured.Unstructured) error) error {
	data, err := artifacts.Deploy.ReadFile(path.Join("deploy", name))
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if mutate != nil {
			if err := mutate(obj); err != nil {
				return err
			}
		}
		mapping, err := mapper.RESTMapping(obj.GroupVersionKind().GroupKind(), obj.GroupVersionKind().Version)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		resource := c.Dynamic.Resource(mapping.Resource)
		var client interface {
			Apply(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions, ...string) (*unstructured.Unstructured, error)
		} = resource
		if ns := obj.GetNamespace(); ns != "" {
			client = resource.Namespace(ns)
		}
		if _, err := client.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying %s %s from %s: %w", obj.GetKind(), obj.GetName(), name, err)
		}
	}
}
