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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	remote "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
	kubeletoptions "k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubemark"

	"github.com/evictionrequest/apiserver/hack/tools/kubernetes/kubelet-node/cri"
)

// run runs the node until ctx ends.
func run(ctx context.Context, o *options) error {
	flags, config, err := o.kubeletConfig()
	if err != nil {
		return err
	}
	for _, dir := range []string{flags.RootDirectory, config.PodLogsDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	client, heartbeat, err := o.clients(config)
	if err != nil {
		return err
	}
	runtime := cri.New()
	socket := filepath.Join(o.dir, "cri.sock")
	if err := runtime.Serve(socket); err != nil {
		return err
	}
	defer runtime.Stop()
	runtimeService, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint("unix://" + socket).WithConnectionTimeout(15 * time.Second).Build(ctx)
	if err != nil {
		return fmt.Errorf("connecting to the CRI runtime: %w", err)
	}
	hollow := kubemark.NewHollowKubelet(flags, config, client, heartbeat, &cadvisortest.Fake{NodeName: o.nodeName},
		runtime.ImageService, runtimeService, cm.NewStubContainerManager())
	recordEvents(hollow.KubeletDeps, client)
	klog.InfoS("Starting the kubelet", "node", o.nodeName, "shutdownGracePeriod", config.ShutdownGracePeriod.Duration,
		"shutdownGracePeriodCriticalPods", config.ShutdownGracePeriodCriticalPods.Duration)
	if err := kubeletapp.RunKubelet(ctx, &kubeletoptions.KubeletServer{KubeletFlags: *flags, KubeletConfiguration: *config}, hollow.KubeletDeps); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// recordEvents makes the kubelet post its events (Shutdown, NodeNotReady,
// Killing...) to kube-apiserver, as a kubelet does, where kubemark drops
// them: without a recorder, the kubelet makes its own. With it, the
// kubelet watches /dev/kmsg for out-of-memory kills, and stops if it
// cannot read it unless it runs in a user namespace
// (KubeletInUserNamespace, on by default): node-host runs it in one of
// its own, so that it starts, events and all, on any host.
func recordEvents(deps *kubelet.Dependencies, client *clientset.Clientset) {
	deps.Recorder, deps.EventClient = nil, client.CoreV1()
}

// clients are the kubelet's client and the client of its heartbeats, as
// cmd/kubelet makes them.
func (o *options) clients(config *kubeletconfig.KubeletConfiguration) (client, heartbeat *clientset.Clientset, err error) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	restConfig.QPS, restConfig.Burst = float32(config.KubeAPIQPS), int(config.KubeAPIBurst)
	restConfig.UserAgent = "kubelet/" + o.nodeName
	if client, err = clientset.NewForConfig(restConfig); err != nil {
		return nil, nil, err
	}
	heartbeatConfig := *restConfig
	heartbeatConfig.QPS = -1
	heartbeatConfig.Timeout = config.NodeStatusUpdateFrequency.Duration
	if heartbeat, err = clientset.NewForConfig(&heartbeatConfig); err != nil {
		return nil, nil, err
	}
	return client, heartbeat, nil
}

// kubeletConfig is the kubelet's configuration: the kubelet's defaults,
// the options, and what keeps the node inside --dir and off the host.
func (o *options) kubeletConfig() (*kubeletoptions.KubeletFlags, *kubeletconfig.KubeletConfiguration, error) {
	labels, err := o.nodeLabels()
	if err != nil {
		return nil, nil, err
	}
	taints, err := o.nodeTaints()
	if err != nil {
		return nil, nil, err
	}
	flags := kubeletoptions.NewKubeletFlags()
	flags.KubeConfig = o.kubeconfig
	flags.RootDirectory = filepath.Join(o.dir, "kubelet")
	flags.CertDirectory = filepath.Join(o.dir, "pki")
	flags.HostnameOverride = o.nodeName
	flags.NodeLabels = labels
	config, err := kubeletoptions.NewKubeletConfiguration()
	if err != nil {
		return nil, nil, err
	}
	config.ShutdownGracePeriod = metav1.Duration{Duration: o.shutdownGracePeriod}
	config.ShutdownGracePeriodCriticalPods = metav1.Duration{Duration: o.criticalPodsShutdownGracePeriod()}
	config.NodeStatusUpdateFrequency = metav1.Duration{Duration: o.nodeStatusUpdateFrequency}
	config.RegisterWithTaints = taints
	config.MaxPods = int32(o.maxPods)
	// The kubelet's other log directory, kubelet.ContainerLogsDir, is a
	// package variable with no setting: it is left as it is, since the
	// kubelet only creates it and links logs into it through its
	// OSInterface, which kubemark's dependencies fake (nothing is written).
	config.PodLogsDir = filepath.Join(o.dir, "pod-logs")
	// Nothing of the host: no server on a port, no iptables chains, no
	// cgroups (the container manager is a stub), no static pods.
	config.EnableServer, config.ReadOnlyPort = false, 0
	config.MakeIPTablesUtilChains = false
	config.CgroupsPerQOS, config.EnforceNodeAllocatable, config.CgroupDriver = false, nil, "cgroupfs"
	// The stub container manager uses no cgroups, of either version.
	config.FailCgroupV1 = false
	config.StaticPodPath = ""
	config.MaxOpenFiles = openFilesLimit()
	// The fake machine reports no filesystem: eviction for disk pressure
	// would evict every pod.
	config.EvictionHard = map[string]string{}
	// cmd/kubelet validates its configuration before RunKubelet, which
	// does not: the same validation, with the same feature gates.
	if err := validation.ValidateKubeletConfiguration(config, utilfeature.DefaultFeatureGate); err != nil {
		return nil, nil, err
	}
	return flags, config, nil
}

// openFilesLimit is the process's hard limit of open files: the kubelet
// raises its own limit to MaxOpenFiles, and may not go past this one.
func openFilesLimit() int64 {
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return 1024
	}
	return int64(limit.Max)
}
