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

// Command kubelet-node runs one Kubernetes node with the upstream kubelet's
// own code at the pinned Kubernetes version: kubemark's hollow kubelet
// (k8s.io/kubernetes/pkg/kubemark), that is cmd/kubelet's RunKubelet with
// its pod workers, status manager, node status, eviction manager and
// graceful node shutdown manager, on stub host managers that touch nothing
// of the host (no cgroups, mounts, sysctls or iptables), and on a CRI
// runtime without containers (package cri). The local control plane runs
// one per real node; everything the node writes stays in --dir.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
)

func main() {
	o := newOptions()
	fs := flag.NewFlagSet("kubelet-node", flag.ExitOnError)
	o.addFlags(fs)
	klog.InitFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.ErrorS(err, "kubelet-node failed", "node", o.nodeName)
		os.Exit(1)
	}
}
