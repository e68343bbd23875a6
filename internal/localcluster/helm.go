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
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/artifacts"
)

// HelmInstall installs the product with helm, from its chart, instead of
// applying an overlay: helm creates every object of the release, and the
// harness runs the release's workloads as local processes, with the
// arguments the release's Deployments give them, as it runs an overlay's.
type HelmInstall struct {
	// Release names the release; Chart is the chart's directory or archive.
	Release, Chart string
	// Values are values files, Set values of --set, as a user gives them.
	Values, Set []string
}

// release is the helm release the cluster runs: what helm installed, and
// the ports where the harness serves what its Services name.
type release struct {
	install HelmInstall
	// apiserverPort and controllerPort are where the chart's Services of
	// the server and of evictionrequest-controller point, on localhost.
	apiserverPort, controllerPort int
	// processes are the release's server replicas, stopped at an upgrade
	// (its leader-elected workloads are the cluster's Replicas).
	processes []*Process
	// serving is the serving certificate the chart generated, which the
	// server's processes serve in place of the cluster's; nil when the
	// release reads a Secret of the user's.
	serving *servingTrust
}

// wiring are the values through which the chart's objects reach the local
// processes: the Services of the server and of evictionrequest-controller
// name localhost (ExternalName) on the harness's ports, and the APIService
// trusts the cluster's serving CA. They are what a user sets to run the
// server outside the cluster's pods.
func (c *Cluster) wiring(r *release) []string {
	ca := base64.StdEncoding.EncodeToString(c.pki.servingCA.certPEM())
	return []string{
		"--set=apiserver.service.externalName=localhost", "--set=apiserver.service.port=" + strconv.Itoa(r.apiserverPort),
		"--set=controller.service.externalName=localhost", "--set=controller.service.port=" + strconv.Itoa(r.controllerPort),
		"--set=apiserver.servingCertificate.caBundle=" + ca,
	}
}

// Helm runs the cluster's helm with args, against the cluster, and returns
// its output.
func (c *Cluster) Helm(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.bin("helm"), args...)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+c.KubeconfigPath,
		// helm's own configuration and caches stay in the cluster's directory.
		"HELM_CONFIG_HOME="+c.path("helm", "config"), "HELM_CACHE_HOME="+c.path("helm", "cache"), "HELM_DATA_HOME="+c.path("helm", "data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// startRelease installs Config.Helm and runs its workloads.
func (c *Cluster) startRelease(ctx context.Context) error {
	ports, err := c.reservePorts(2)
	if err != nil {
		return err
	}
	c.release = &release{install: *c.cfg.Helm, apiserverPort: ports[0], controllerPort: ports[1]}
	args := []string{"install", c.release.install.Release, c.release.install.Chart, "--namespace=" + serverNamespace, "--create-namespace"}
	if _, err := c.Helm(ctx, append(append(args, c.release.install.args()...), c.wiring(c.release)...)...); err != nil {
		return err
	}
	return c.runRelease(ctx)
}

// args are the values of the install, as helm takes them.
func (h HelmInstall) args() []string {
	var args []string
	for _, f := range h.Values {
		args = append(args, "--values="+f)
	}
	for _, s := range h.Set {
		args = append(args, "--set="+s)
	}
	return args
}

// UpgradeRelease upgrades the cluster's release as helm upgrade does, with
// the values of args (--values=FILE and --set=KEY=VALUE: the new
// revision's, as helm upgrade takes them), and rolls its workloads out:
// every process of the release stops and starts again as the upgraded
// Deployments say. The server's etcd cluster, a StatefulSet, keeps running.
func (c *Cluster) UpgradeRelease(ctx context.Context, args ...string) error {
	if c.release == nil {
		return fmt.Errorf("the cluster runs no helm release")
	}
	upgrade := []string{"upgrade", c.release.install.Release, c.release.install.Chart, "--namespace=" + serverNamespace}
	if _, err := c.Helm(ctx, append(append(upgrade, args...), c.wiring(c.release)...)...); err != nil {
		return err
	}
	c.release.install.Values, c.release.install.Set = nil, nil
	for _, arg := range args {
		switch {
		case strings.HasPrefix(arg, "--values="):
			c.release.install.Values = append(c.release.install.Values, strings.TrimPrefix(arg, "--values="))
		case strings.HasPrefix(arg, "--set="):
			c.release.install.Set = append(c.release.install.Set, strings.TrimPrefix(arg, "--set="))
		}
	}
	c.stopRelease(false)
	return c.runRelease(ctx)
}

// UninstallRelease removes the cluster's release as helm uninstall does and
// stops its workloads.
func (c *Cluster) UninstallRelease(ctx context.Context) error {
	if c.release == nil {
		return fmt.Errorf("the cluster runs no helm release")
	}
	if _, err := c.Helm(ctx, "uninstall", c.release.install.Release, "--namespace="+serverNamespace, "--wait"); err != nil {
		return err
	}
	c.stopRelease(true)
	return nil
}

// runRelease reads what helm installed and runs its workloads: the etcd
// StatefulSet's members (once), the server's replicas behind a balancer
// on the Service's port, evictionrequest-controller and the surge
// interceptor.
func (c *Cluster) runRelease(ctx context.Context) error {
	manifest, err := c.Helm(ctx, "get", "manifest", c.release.install.Release, "--namespace="+serverNamespace)
	if err != nil {
		return err
	}
	if c.manifests, err = artifacts.Decode([]byte(manifest)); err != nil {
		return err
	}
	if _, err := c.manifest("Deployment", serverName); err == nil {
		if err := c.runReleaseServers(ctx); err != nil {
			return err
		}
	}
	// One replica of each leader-elected Deployment, the controller's
	// bridge on the port the release's Service names; stopRelease stops
	// whichever processes they run by then (a restart replaces one).
	if _, err := c.manifest("Deployment", lifecycleControllerName); err == nil {
		r := &Replicas{c: c, name: lifecycleControllerName, binary: "evictionrequest-controller", logName: lifecycleControllerName,
			pair: c.pki.lifecycleController, args: c.cfg.ServerArgs, bridgePorts: []int{c.release.controllerPort}}
		if err := r.start(ctx, 1); err != nil {
			return err
		}
		c.mu.Lock()
		c.lifecycleController = r
		c.mu.Unlock()
	}
	if _, err := c.manifest("Deployment", surgeInterceptorName); err == nil {
		r := &Replicas{c: c, name: surgeInterceptorName, binary: "surge-interceptor", logName: "surge-interceptor",
			pair: c.pki.surgeInterceptor, args: []string{"--v=2"}}
		if err := r.start(ctx, 1); err != nil {
			return err
		}
		c.mu.Lock()
		c.surgeInterceptor = r
		c.mu.Unlock()
	}
	return nil
}

// runReleaseServers runs the replicas of the release's server behind a
// balancer on the port its Service names, serving the certificate the
// chart generated or else the cluster's, its webhooks trusting that
// certificate's CA, and waits until the aggregator serves our API.
func (c *Cluster) runReleaseServers(ctx context.Context) error {
	// The Deployment must run as the service account the cluster's PKI
	// authenticates.
	if _, err := c.workloadOf(serverName, serverName); err != nil {
		return err
	}
	var err error
	if c.serverEtcd == nil {
		if err := c.startServerEtcd(ctx); err != nil {
			return err
		}
	}
	if c.release.serving, err = c.releaseServingCert(ctx); err != nil {
		return err
	}
	// The chart runs no replicas in the cluster when the Service points
	// outside it, as the wiring has it: as many as the release asks for
	// run here.
	replicas, err := c.releaseServerReplicas(ctx)
	if err != nil {
		return err
	}
	c.servers = nil
	for i := 0; i < replicas; i++ {
		server, err := c.StartServer(ctx, ServerOptions{Name: fmt.Sprintf("%s-%d", serverName, i), Args: c.cfg.ServerArgs})
		if err != nil {
			return err
		}
		c.servers = append(c.servers, server)
		c.release.processes = append(c.release.processes, server.Process)
	}
	if c.balancer, err = c.startBalancerOn(c.release.apiserverPort, c.servers); err != nil {
		return err
	}
	if err := c.trustWebhooksOf(ctx, serverName); err != nil {
		return err
	}
	return c.waitAggregated(ctx, c.servers[0].Process)
}

// releaseServerReplicas is apiserver.replicas of the release, its
// default included.
func (c *Cluster) releaseServerReplicas(ctx context.Context) (int, error) {
	out, err := c.Helm(ctx, "get", "values", c.release.install.Release, "--namespace="+serverNamespace, "--all", "--output=json")
	if err != nil {
		return 0, err
	}
	var values struct {
		APIServer struct {
			Replicas int `json:"replicas"`
		} `json:"apiserver"`
	}
	if err := json.Unmarshal([]byte(out), &values); err != nil {
		return 0, fmt.Errorf("the release's values: %w", err)
	}
	if values.APIServer.Replicas < 1 {
		return 0, fmt.Errorf("the release asks for %d replicas of the server", values.APIServer.Replicas)
	}
	return values.APIServer.Replicas, nil
}

// trustWebhooksOf sets the caBundle of the webhooks of the release that
// call the Service name to the cluster's serving CA, as the process does
// with --eviction-bridge-webhook-configuration, at once: a JSON patch of
// that field alone, which helm does not manage.
func (c *Cluster) trustWebhooksOf(ctx context.Context, service string) error {
	ca := base64.StdEncoding.EncodeToString(c.trust().caPEM)
	for _, config := range c.manifestsOf("ValidatingWebhookConfiguration") {
		webhooks, _, err := unstructured.NestedSlice(config.Object, "webhooks")
		if err != nil {
			return err
		}
		var patch []map[string]any
		for i, w := range webhooks {
			if name, _, _ := unstructured.NestedString(w.(map[string]any), "clientConfig", "service", "name"); name == service {
				patch = append(patch, map[string]any{"op": "add", "path": fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", i), "value": ca})
			}
		}
		if len(patch) == 0 {
			continue
		}
		data, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		if _, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx, config.GetName(), types.JSONPatchType, data, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// stopRelease stops the release's workloads; with etcd, the server's etcd
// cluster too.
func (c *Cluster) stopRelease(etcd bool) {
	for _, p := range c.release.processes {
		p.Stop()
		c.untrack(p)
	}
	c.release.processes = nil
	c.mu.Lock()
	workloads := []*Replicas{c.lifecycleController, c.surgeInterceptor}
	c.lifecycleController, c.surgeInterceptor = nil, nil
	c.mu.Unlock()
	for _, r := range workloads {
		if r != nil {
			r.stop()
		}
	}
	if c.balancer != nil {
		c.balancer.close()
		c.balancer = nil
	}
	c.servers = nil
	if etcd {
		for _, m := range c.serverEtcd {
			m.Stop()
			c.untrack(m.Process)
		}
		c.serverEtcd = nil
	}
}
