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

// Package localcluster runs a real Kubernetes control plane on loopback with
// evictionrequest-apiserver registered behind the aggregator: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kwok and our
// server (and, on request, the surge interceptor and Karpenter), each a child
// process on free ports. `make run` and the e2e suite both use it.
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/pkg/util/loopback"
)

const (
	serverName           = "evictionrequest-apiserver"
	serverNamespace      = artifacts.Namespace
	frontProxyClientName = "front-proxy-client"

	// startTimeout bounds how long one component may take to become ready.
	startTimeout = 2 * time.Minute
	// callTimeout bounds one call of the harness to kube-apiserver.
	callTimeout = 30 * time.Second
)

// Config says where the cluster lives and what it runs.
type Config struct {
	// Dir holds everything of the cluster: certificates, kubeconfigs, etcd
	// data and, under logs/, the output of every component. Start wipes it.
	Dir string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kwok and
	// evictionrequest-apiserver.
	BinDir string
	// Overlay is the overlay of artifacts/ the cluster deploys, DefaultOverlay
	// when empty. Its Deployment of our server runs as that many local
	// processes, behind a load balancer when there are several, and an etcd
	// StatefulSet of the overlay as a local etcd cluster of as many members.
	Overlay string
	// BridgeFailurePolicy is the failurePolicy of the eviction API bridge's
	// webhook, as an admin's patch of the overlay sets it
	// (docs/eviction-bridge.md, "Ignore or Fail"); the overlay's (Ignore)
	// when empty.
	BridgeFailurePolicy admissionregistrationv1.FailurePolicyType
	// Nodes is the number of kwok nodes, named kwok-node-0, kwok-node-1, ...
	Nodes int
	// KubeletNodes is the number of nodes run by the real kubelet, named
	// kubelet-node-0, kubelet-node-1, ..., with graceful node shutdown on
	// (DefaultKubeletNodeOptions).
	KubeletNodes int
	// ServerArgs are extra flags of evictionrequest-apiserver.
	ServerArgs []string
	// SurgeInterceptor runs the surge interceptor too.
	SurgeInterceptor bool
	// Lifecycle runs Kubernetes' own lifecycle.k8s.io/v1alpha1 API instead
	// of ours: kube-apiserver with the EvictionRequestAPI feature gate and
	// the API on, and evictionrequest-controller (with ServerArgs) in place
	// of evictionrequest-apiserver, from LifecycleOverlay unless Overlay says
	// otherwise.
	Lifecycle bool
	// Helm, when set, installs the product with helm from its chart, in
	// place of Overlay: the harness runs the release's workloads as it runs
	// an overlay's (HelmInstall).
	Helm *HelmInstall
	// UpstreamControllers runs, with Lifecycle, Kubernetes 1.38's own
	// evictionrequest-controller and imperative-eviction-responder-controller
	// (eviction-controllers, as kube-controller-manager runs them) in place
	// of evictionrequest-controller's, which then runs the actors only: the
	// node drain and the eviction API bridge.
	UpstreamControllers bool
	// UpstreamControllerArgs are extra flags of Kubernetes' controllers
	// (their client's --kube-api-qps, say).
	UpstreamControllerArgs []string
	// ControllerManagerArgs are extra flags of kube-controller-manager.
	ControllerManagerArgs []string
	// WorkloadReplicas is how many processes each leader-elected Deployment
	// of the overlay other than our server runs as (evictionrequest-controller,
	// the surge interceptor), as the chart's two replicas: one holds the
	// Lease and acts, the others wait for it, and kube-apiserver calls the
	// eviction API bridge, which each serves, through a load balancer. 0 is
	// one. A helm release (Helm) runs one of each, whatever it says.
	WorkloadReplicas int
	// LifecycleController serves Kubernetes' lifecycle.k8s.io API too and
	// runs, beside our server and in its namespace, evictionrequest-controller
	// as LifecycleOverlay deploys it: both APIs at once, as an admin who
	// applies both overlays has them.
	LifecycleController bool
	// Karpenter runs Karpenter's KWOK provider (the karpenter binary of
	// BinDir) as the cluster's node autoscaler, after Karpenter's CRDs and
	// a KWOKNodeClass (KarpenterNodeClass) are installed; NodePools are
	// created with CreateKarpenterNodePool. Its nodes are kwok nodes.
	Karpenter bool
	// KarpenterEnv are settings of Karpenter, which it reads from its
	// environment: FEATURE_GATES=..., BATCH_MAX_DURATION=5s, say.
	KarpenterEnv []string
	// Logf reports progress; nil is silent.
	Logf func(format string, args ...any)
}

// Cluster is a running local control plane.
type Cluster struct {
	// KubeconfigPath is an admin kubeconfig of kube-apiserver.
	KubeconfigPath string
	// AdminConfig is the client configuration of KubeconfigPath.
	AdminConfig *rest.Config
	// Client is a clientset on AdminConfig.
	Client kubernetes.Interface
	// Dynamic is a dynamic client on AdminConfig.
	Dynamic dynamic.Interface
	// NodeNames are the kwok nodes.
	NodeNames []string
	// KubeletNodes are the nodes of Config.KubeletNodes.
	KubeletNodes []*KubeletNode
	// AuditLogPath is kube-apiserver's audit log of pod evictions.
	AuditLogPath string

	cfg Config
	pki *pki
	// manifests are the objects of the deployed overlay of artifacts/.
	manifests []*unstructured.Unstructured
	pids      *pidLog
	logDir    string
	apiPort   int
	// kubeAPIServer is kube-apiserver's process, for RestartKubeAPIServer.
	kubeAPIServer *Process
	// etcd is kube-apiserver's.
	etcd *EtcdMember
	// serverEtcd is the etcd cluster of our server, when the overlay runs one.
	serverEtcd []*EtcdMember

	mu        sync.Mutex
	processes []*Process
	// ports are every port handed to a component, never handed out twice.
	ports []int
	// kwok runs the kwok nodes.
	kwok *Process
	// lifecycleController runs with Lifecycle or LifecycleController.
	lifecycleController *Replicas
	// karpenter runs with Config.Karpenter.
	karpenter *Process
	// upstreamControllers runs with Config.UpstreamControllers.
	upstreamControllers *Process
	// surgeInterceptor runs with Config.SurgeInterceptor.
	surgeInterceptor *Replicas
	// servers are the replicas of our server the APIService reaches,
	// through balancer when there are several.
	servers  []*Server
	balancer *balancer
	// balancers are those in front of the replicas of workloads that serve
	// the eviction API bridge.
	balancers []*balancer
	exited    chan *Process
	// release is the helm release of Config.Helm.
	release *release
}

// Start brings up the control plane and returns once our APIService is
// Available and the nodes are Ready. On failure it stops what it started.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	switch {
	case cfg.Overlay != "":
	case cfg.Lifecycle:
		cfg.Overlay = LifecycleOverlay
	default:
		cfg.Overlay = DefaultOverlay
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.Dir = dir
	if cfg.BinDir, err = filepath.Abs(cfg.BinDir); err != nil {
		return nil, err
	}
	pidFile := filepath.Join(dir, "pids")
	if err := killLeftovers(pidFile, dir); err != nil {
		return nil, fmt.Errorf("stopping the processes of an earlier run in %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, logDir: filepath.Join(dir, "logs"), pids: newPIDLog(pidFile), exited: make(chan *Process, 16)}
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		c.Stop()
		return nil, fmt.Errorf("%w (component logs in %s)", err, c.logDir)
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	var err error
	c.cfg.Logf("Generating certificates in %s", c.path("pki"))
	if c.pki, err = newPKI(c.path("pki")); err != nil {
		return err
	}
	steps := []struct {
		what string
		run  func(context.Context) error
	}{
		{"etcd", c.startEtcd},
		{"kube-apiserver", c.startKubeAPIServer},
		{"kube-controller-manager", c.startControllerManager},
		{"kube-scheduler", c.startScheduler},
		{"kwok and its nodes", c.startKwok},
		{"the real kubelet nodes", c.startKubeletNodes},
		{"evictionrequest-apiserver", c.startEvictionServer},
	}
	switch {
	case c.cfg.Helm != nil:
		steps[len(steps)-1].what, steps[len(steps)-1].run = "the helm release "+c.cfg.Helm.Release, c.startRelease
	case c.cfg.Lifecycle:
		steps[len(steps)-1].what, steps[len(steps)-1].run = "evictionrequest-controller", c.startLifecycleController
	case c.cfg.LifecycleController:
		steps = append(steps, struct {
			what string
			run  func(context.Context) error
		}{"evictionrequest-controller beside the server", c.startLifecycleControllerBeside})
	}
	if c.cfg.SurgeInterceptor && c.cfg.Helm == nil {
		steps = append(steps, struct {
			what string
			run  func(context.Context) error
		}{"the surge interceptor", c.startSurgeInterceptor})
	}
	if c.cfg.Karpenter {
		steps = append(steps, struct {
			what string
			run  func(context.Context) error
		}{"Karpenter", c.startKarpenter})
	}
	for _, step := range steps {
		c.cfg.Logf("Starting %s", step.what)
		if err := step.run(ctx); err != nil {
			return fmt.Errorf("starting %s: %w", step.what, err)
		}
	}
	return nil
}

// Stop stops every process of the cluster, newest first.
func (c *Cluster) Stop() {
	c.mu.Lock()
	processes := c.processes
	c.processes = nil
	c.mu.Unlock()
	for i := len(processes) - 1; i >= 0; i-- {
		processes[i].Stop()
	}
	if c.balancer != nil {
		c.balancer.close()
	}
	for _, b := range c.balancers {
		b.close()
	}
}

// Redundant is true for a process the cluster can lose one of and go on:
// a server replica or a member of the server's etcd, when there are several.
func (c *Cluster) Redundant(p *Process) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.servers) > 1 {
		for _, s := range c.servers {
			if s.Process == p {
				return true
			}
		}
	}
	if len(c.serverEtcd) > 1 {
		for _, m := range c.serverEtcd {
			if m.Process == p {
				return true
			}
		}
	}
	return false
}

// Processes are the processes of the cluster that run or ran last, in the
// order they started.
func (c *Cluster) Processes() []*Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Process(nil), c.processes...)
}

// LogDir is where the components write their output.
func (c *Cluster) LogDir() string {
	return c.logDir
}

// Exited delivers every component that exits after it was ready, whether
// it crashed or was stopped. One that dies while it starts is started
// again (waitFor) or fails the start.
func (c *Cluster) Exited() <-chan *Process {
	return c.exited
}

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.cfg.Dir}, elem...)...)
}

func (c *Cluster) bin(name string) string {
	return filepath.Join(c.cfg.BinDir, name)
}

// run starts a component and tracks it for Stop and Exited.
func (c *Cluster) run(name string, env []string, bin string, args ...string) (*Process, error) {
	p, err := startProcess(name, c.logDir, c.pids, env, c.bin(bin), args...)
	if err != nil {
		return nil, err
	}
	c.track(p)
	return p, nil
}

func (c *Cluster) track(p *Process) {
	c.mu.Lock()
	c.processes = append(c.processes, p)
	c.mu.Unlock()
	p.mu.Lock()
	p.onExit = func(p *Process) {
		select {
		case c.exited <- p:
		default:
		}
	}
	p.mu.Unlock()
}

// untrack forgets a process that was stopped on purpose.
func (c *Cluster) untrack(p *Process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.processes {
		if c.processes[i] == p {
			c.processes = append(c.processes[:i], c.processes[i+1:]...)
			return
		}
	}
}

// reservePorts returns n free loopback ports no component of the cluster
// was given before: a port chosen for a component that has not bound it yet
// must not go to another.
func (c *Cluster) reservePorts(n int) ([]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ports, err := loopback.FreePorts(n, c.ports...)
	c.ports = append(c.ports, ports...)
	return ports, err
}

func loopbackURL(scheme string, port int) string {
	return scheme + "://127.0.0.1:" + strconv.Itoa(port)
}

// errExitedBeforeReady is the error of a component that died while the
// harness waited for it to be ready.
var errExitedBeforeReady = errors.New("exited before it was ready")

// errExited reports a component that died while the harness waited for it,
// with the end of its log.
func errExited(p *Process) error {
	return fmt.Errorf("%s %w (%v); the end of %s:\n%s", p.Name, errExitedBeforeReady, p.Err(), p.LogFile, p.logTail(logTailLines))
}
