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
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

const (
	// surgeInterceptorName is the Deployment and service account of the
	// surge interceptor in artifacts/.
	surgeInterceptorName = "evictionrequest-surge-interceptor"
	// lifecycleControllerName is the Deployment and service account of
	// evictionrequest-controller in artifacts/.
	lifecycleControllerName = "evictionrequest-controller"
)

// WorkloadOptions describe one process of a Deployment of the overlay.
type WorkloadOptions struct {
	// Name names its log file.
	Name string
	// Args are flags added to those of the Deployment.
	Args []string
	// BridgePort is where the eviction API bridge is served, on a port
	// the cluster reserved; a free port when zero.
	BridgePort int
	// WebhookPort is where kube-apiserver calls the bridge when that is
	// not the process itself: the load balancer in front of the replicas.
	// Zero with BridgePort set leaves the webhooks to a helm release's
	// Service, which names BridgePort already.
	WebhookPort int
}

// startWorkload starts one process of the Deployment name of the overlay,
// which runs binary and serves /metrics, /healthz and /readyz over HTTPS on
// --metrics-bind-address: with the Deployment's arguments, authenticated
// with pair as its service account (the overlay applied its RBAC), on a free
// port; and waits until it is ready. Replicas start the processes of a
// leader-elected Deployment with it, one call each.
func (c *Cluster) startWorkload(ctx context.Context, name, binary string, pair *keyPair, opts WorkloadOptions) (*Process, error) {
	w, err := c.workloadOf(name, name)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := c.writeKubeconfig(name, loopbackURL("https", c.apiPort), pair)
	if err != nil {
		return nil, err
	}
	ports, err := c.reservePorts(2)
	if err != nil {
		return nil, err
	}
	if opts.BridgePort != 0 {
		ports[1] = opts.BridgePort
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[0])
	replace := map[string]string{"metrics-bind-address": metrics, "kubeconfig": ""}
	args := []string{"--kubeconfig=" + kubeconfig, "--metrics-bind-address=" + metrics}
	servesBridge := runsController(w.args, bridge.Name)
	if servesBridge {
		// The eviction API bridge serves with the cluster's serving
		// certificate on a port of its own, and puts the cluster's serving
		// CA in its webhook's caBundle.
		maps.Copy(replace, map[string]string{"tls-cert-file": "", "tls-private-key-file": ""})
		maps.Copy(replace, c.bridgeArgs())
		args = append(args, fmt.Sprintf("--secure-port=%d", ports[1]), "--bind-address=127.0.0.1",
			"--tls-cert-file="+c.pki.evictionServing.CertFile, "--tls-private-key-file="+c.pki.evictionServing.KeyFile)
	}
	p, err := c.run(opts.Name, nil, binary, append(append(c.withBridgeCAFile(localArgs(w.args, replace)), args...), opts.Args...)...)
	if err != nil {
		return nil, err
	}
	p.MetricsURL = "https://" + metrics + "/metrics"
	if p.MetricsClient, err = c.metricsClient(); err != nil {
		return nil, err
	}
	err = c.waitUntilReady(ctx, p, opts.Name, func(ctx context.Context) error {
		return httpGetOK(ctx, probeClient, "https://"+metrics+"/readyz", "ok")
	})
	if err != nil || !servesBridge {
		return p, err
	}
	if opts.BridgePort != 0 && opts.WebhookPort == 0 {
		// A helm release's Service names the port already.
		return p, c.trustWebhooksOf(ctx, name)
	}
	return p, c.serveWebhooksOf(ctx, name, cmp.Or(opts.WebhookPort, ports[1]))
}

// serveWebhooksOf points the webhooks of the overlay that call the Service
// name (a workload's own) at the process on port.
func (c *Cluster) serveWebhooksOf(ctx context.Context, name string, port int) error {
	local := name + "-local"
	services := c.Client.CoreV1().Services(serverNamespace)
	svc, err := services.Get(ctx, local, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = services.Create(ctx, externalNameService(local, port), metav1.CreateOptions{})
	case err == nil:
		svc.Spec.Ports = externalNameService(local, port).Spec.Ports
		_, err = services.Update(ctx, svc, metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	return c.registerWebhooks(ctx, name, local)
}

// StartSurgeInterceptor starts a surge-interceptor as the overlay deploys it.
func (c *Cluster) StartSurgeInterceptor(ctx context.Context, opts WorkloadOptions) (*Process, error) {
	return c.startWorkload(ctx, surgeInterceptorName, "surge-interceptor", c.pki.surgeInterceptor, opts)
}

func (c *Cluster) startSurgeInterceptor(ctx context.Context) error {
	r, err := c.startReplicated(ctx, surgeInterceptorName, "surge-interceptor", "surge-interceptor", c.pki.surgeInterceptor, []string{"--v=2"})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.surgeInterceptor = r
	c.mu.Unlock()
	return nil
}

// SurgeInterceptor is the first replica of the surge interceptor the
// cluster runs with Config.SurgeInterceptor, nil otherwise.
func (c *Cluster) SurgeInterceptor() *Process {
	return first(c.SurgeInterceptorReplicas())
}

// SurgeInterceptorReplicas are the replicas of the surge interceptor the
// cluster runs with Config.SurgeInterceptor, nil otherwise.
func (c *Cluster) SurgeInterceptorReplicas() *Replicas {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.surgeInterceptor
}

// RestartSurgeInterceptor stops each replica of the cluster's surge
// interceptor with SIGTERM, if it still runs, and starts it again with the
// same flags, as the kubelet restarts its container; it returns once the
// new processes are ready.
func (c *Cluster) RestartSurgeInterceptor(ctx context.Context) error {
	r := c.SurgeInterceptorReplicas()
	if r == nil {
		return errors.New("the cluster runs no surge interceptor")
	}
	for i := range r.Processes() {
		if err := r.Restart(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// first is the first replica of r, nil when r is.
func first(r *Replicas) *Process {
	if r == nil {
		return nil
	}
	return r.Processes()[0]
}

// startLifecycleController deploys the lifecycle overlay: its RBAC, roles
// and policies, and evictionrequest-controller as a local process.
func (c *Cluster) startLifecycleController(ctx context.Context) error {
	if err := c.renderManifests(); err != nil {
		return err
	}
	if err := c.applyManifests(ctx); err != nil {
		return err
	}
	args := c.cfg.ServerArgs
	if c.cfg.UpstreamControllers {
		if err := c.StartUpstreamControllers(ctx); err != nil {
			return err
		}
		args = append(args, ActorsOnly)
	}
	return c.runLifecycleController(ctx, lifecycleControllerName, args...)
}

// ActorsOnly is the flag that leaves evictionrequest-controller the actors
// (the node drain, the eviction API bridge) on a cluster whose
// kube-controller-manager runs Kubernetes' own controllers.
const ActorsOnly = "--controllers=-evictionrequest-controller,-imperative-eviction-responder-controller"

// StartUpstreamControllers starts Kubernetes 1.38's eviction request
// controllers as kube-controller-manager runs them, with its identity and
// its client limits, with the cluster's flags for them and then args (for
// one of the two only: --controllers=NAME), and waits until their caches
// synced.
func (c *Cluster) StartUpstreamControllers(ctx context.Context, args ...string) error {
	kubeconfig, err := c.writeKubeconfig("kube-controller-manager", loopbackURL("https", c.apiPort), c.pki.controllerManager)
	if err != nil {
		return err
	}
	ports, err := c.reservePorts(1)
	if err != nil {
		return err
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[0])
	args = slices.Concat([]string{"--kubeconfig=" + kubeconfig, "--metrics-bind-address=" + metrics, "--v=2"}, c.cfg.UpstreamControllerArgs, args)
	p, err := c.run("upstream-eviction-controllers", nil, "eviction-controllers", args...)
	if err != nil {
		return err
	}
	p.MetricsURL = "http://" + metrics + "/metrics"
	c.mu.Lock()
	c.upstreamControllers = p
	c.mu.Unlock()
	return c.waitUntilReady(ctx, p, "Kubernetes' eviction request controllers", func(ctx context.Context) error {
		return httpGetOK(ctx, http.DefaultClient, "http://"+metrics+"/healthz", "ok")
	})
}

// UpstreamControllers is the process of Kubernetes' eviction request
// controllers, nil unless the cluster runs them.
func (c *Cluster) UpstreamControllers() *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.upstreamControllers
}

// startLifecycleControllerBeside adds the lifecycle overlay to the deployed
// one (the objects they share once), applies what it adds, and starts its
// evictionrequest-controller.
func (c *Cluster) startLifecycleControllerBeside(ctx context.Context) error {
	objects, err := artifacts.Render(LifecycleOverlay, c.CertFiles())
	if err != nil {
		return err
	}
	var added []*unstructured.Unstructured
	for _, obj := range objects {
		if _, err := c.manifest(obj.GetKind(), obj.GetName()); err != nil {
			added = append(added, obj)
		}
	}
	c.manifests = append(c.manifests, added...)
	var apply []*unstructured.Unstructured
	for _, obj := range added {
		if !standsIn(obj) {
			apply = append(apply, obj)
		}
	}
	if err := c.Apply(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return err
	}
	// The server's flags are not its: one node drain is enough, the
	// server's, since both would act on the same Node annotations.
	return c.runLifecycleController(ctx, lifecycleControllerName, "--v=2")
}

// runLifecycleController starts the replicas of the cluster's
// evictionrequest-controller with args, their logs named after name.
func (c *Cluster) runLifecycleController(ctx context.Context, name string, args ...string) error {
	r, err := c.startReplicated(ctx, lifecycleControllerName, "evictionrequest-controller", name, c.pki.lifecycleController, args)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.lifecycleController = r
	c.mu.Unlock()
	return nil
}

// LifecycleController is the first replica of the evictionrequest-controller
// of a cluster of the lifecycle API, or of the one beside our server; nil
// otherwise.
func (c *Cluster) LifecycleController() *Process {
	return first(c.LifecycleControllerReplicas())
}

// LifecycleControllerReplicas are the replicas of the cluster's
// evictionrequest-controller, nil when it runs none.
func (c *Cluster) LifecycleControllerReplicas() *Replicas {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lifecycleController
}

// RestartLifecycleController stops each replica of evictionrequest-controller
// with SIGTERM and starts it again with the same flags, as a rolling update
// of its Deployment would; it returns once the new processes are ready.
func (c *Cluster) RestartLifecycleController(ctx context.Context) error {
	r := c.LifecycleControllerReplicas()
	if r == nil {
		return errors.New("the cluster runs no evictionrequest-controller")
	}
	r.mu.Lock()
	args := r.args
	r.mu.Unlock()
	return c.RestartLifecycleControllerWith(ctx, args...)
}

// RestartLifecycleControllerWith is RestartLifecycleController with the
// extra flags args in place of the last ones, as an admin who changes the
// Deployment's arguments (ActorsOnly, say); it starts the controller when
// the cluster runs none.
func (c *Cluster) RestartLifecycleControllerWith(ctx context.Context, args ...string) error {
	r := c.LifecycleControllerReplicas()
	if r == nil {
		return c.runLifecycleController(ctx, lifecycleControllerName+"-restarted", args...)
	}
	for i := range r.Processes() {
		if err := r.restartWith(ctx, i, args); err != nil {
			return err
		}
	}
	return nil
}

// StopUpstreamControllers stops Kubernetes' eviction request controllers
// with SIGTERM, as kube-controller-manager restarted without them would.
func (c *Cluster) StopUpstreamControllers() {
	c.mu.Lock()
	p := c.upstreamControllers
	c.upstreamControllers = nil
	c.mu.Unlock()
	if p != nil {
		p.Stop()
		c.untrack(p)
	}
}
