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

// Command local-up runs the local control plane of `make run` in the
// foreground: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
// kwok, evictionrequest-apiserver registered with the aggregator (or, with
// --api=lifecycle, kube-apiserver's own lifecycle.k8s.io API and
// evictionrequest-controller), the surge interceptor, and a node run by the
// real kubelet (--kubelet-nodes). Ctrl-C or SIGTERM stops every process it
// started.
//
// local-up node shutdown|cancel|kill NODE acts on a real kubelet node of
// a running local control plane, from another terminal: a graceful
// shutdown (logind's PowerOff), calling it off, or cutting the power.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "node" {
		os.Exit(nodeCommand(os.Args[2:]))
	}
	dir := flag.String("dir", "_output/local", "Directory of the cluster: certificates, kubeconfig, data and logs/. Wiped at start.")
	binDir := flag.String("bin-dir", "_output/bin", "Directory of the etcd, kube-apiserver, kube-controller-manager, kwok, kubectl and evictionrequest-apiserver binaries.")
	nodes := flag.Int("nodes", 3, "Number of kwok nodes.")
	kubeletNodes := flag.Int("kubelet-nodes", 1, "Number of nodes run by the real kubelet (kubelet-node-0, ...), with graceful node shutdown on; "+
		"local-up node shutdown|cancel|kill NODE acts on them.")
	api := flag.String("api", "coordination", "EvictionRequest API to serve: coordination (ours, through evictionrequest-apiserver) or lifecycle (Kubernetes' lifecycle.k8s.io/v1alpha1, with evictionrequest-controller).")
	overlay := flag.String("overlay", "", "Overlay of artifacts/ to deploy; empty is the API's with the eviction API bridge (bridge, lifecycle-bridge). For coordination also default (one server with its embedded etcd, no bridge) or ha (two replicas behind the APIService on a three-member etcd); for lifecycle also lifecycle.")
	controllers := flag.String("lifecycle-controllers", "ours", "With --api=lifecycle, whose evictionrequest-controller and imperative-eviction-responder-controller run: "+
		"ours (evictionrequest-controller's) or upstream (Kubernetes 1.38's, as kube-controller-manager runs them; evictionrequest-controller then runs the actors only).")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// make does not pass its own SIGTERM on; ask for one when the parent
	// dies, so that stopping `make run` stops the cluster too.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		klog.Background().Error(err, "Cannot follow the parent process; stop this process directly")
	}
	parsed, err := evictionapi.Parse(*api)
	if err != nil || parsed == evictionapi.Auto {
		klog.Background().Error(err, "--api must be coordination or lifecycle", "api", *api)
		os.Exit(2)
	}
	if *controllers != "ours" && *controllers != "upstream" {
		klog.Background().Error(nil, "--lifecycle-controllers must be ours or upstream", "lifecycleControllers", *controllers)
		os.Exit(2)
	}
	cfg := localcluster.Config{Dir: *dir, BinDir: *binDir, Nodes: *nodes, KubeletNodes: *kubeletNodes, Overlay: *overlay, Lifecycle: parsed == evictionapi.Lifecycle,
		UpstreamControllers: parsed == evictionapi.Lifecycle && *controllers == "upstream"}
	if err := run(ctx, cfg); err != nil {
		klog.Background().Error(err, "Local control plane failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg localcluster.Config) error {
	logger := klog.FromContext(ctx)
	// make run shows the whole product: the node drain requester too, which
	// also drains the nodes a maintenance tool marks MaintenancePlanned=True.
	cfg.ServerArgs = []string{"--controllers=*,evictionrequest-node-drain", "--drain-on-maintenance-planned"}
	// ... and the eviction API bridge, for the namespaces that opt in,
	// serving kube-apiserver only (the harness gives kube-apiserver its
	// client certificate, as docs/eviction-bridge.md has admins do).
	if cfg.Overlay == "" {
		cfg.Overlay = localcluster.BridgeOverlay
		if cfg.Lifecycle {
			cfg.Overlay = localcluster.LifecycleBridgeOverlay
		}
	}
	group := "coordination.k8s.io"
	if cfg.Lifecycle {
		group = "lifecycle.k8s.io"
	}
	cfg.SurgeInterceptor = true
	cfg.Logf = func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) }
	cluster, err := localcluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer cluster.Stop()

	kubectl, _ := filepath.Abs(filepath.Join(cfg.BinDir, "kubectl"))
	fmt.Printf("Local control plane ready: export KUBECONFIG=%s; %s api-resources --api-group=%s; %s get evictionrequests.%s -A (logs in %s; Ctrl-C stops it)%s\n",
		cluster.KubeconfigPath, kubectl, group, kubectl, group, cluster.LogDir(), kubeletNodesHint(cluster, cfg.BinDir))

	for {
		select {
		case <-ctx.Done():
			logger.Info("Stopping the local control plane")
			return nil
		case p := <-cluster.Exited():
			if !cluster.Redundant(p) {
				return fmt.Errorf("%s exited unexpectedly (%v), see %s", p.Name, p.Err(), p.LogFile)
			}
			// With the ha overlay the cluster survives one replica or one
			// etcd member lost, which is what trying it out means.
			logger.Error(p.Err(), "A redundant component exited; the cluster goes on without it", "component", p.Name, "log", p.LogFile)
		}
	}
}

// kubeletNodesHint tells how to shut the real kubelet nodes down.
func kubeletNodesHint(cluster *localcluster.Cluster, binDir string) string {
	if len(cluster.KubeletNodes) == 0 {
		return ""
	}
	localUp, _ := filepath.Abs(filepath.Join(binDir, "local-up"))
	return fmt.Sprintf("; node %s runs the real kubelet: %s node shutdown|cancel|kill %s", cluster.KubeletNodes[0].Name, localUp, cluster.KubeletNodes[0].Name)
}
