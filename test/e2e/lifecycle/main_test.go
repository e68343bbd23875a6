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

// Package lifecycle plays the KEP's flows on Kubernetes' own
// lifecycle.k8s.io/v1alpha1 API, on a cluster of its own: kube-apiserver
// v1.37 with the EvictionRequestAPI gate and the API on, and
// evictionrequest-controller (the controller and the default evictor)
// and the surge interceptor as the lifecycle overlay deploys them, with
// kube-controller-manager, kube-scheduler and kwok nodes.
package lifecycle

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// f is the cluster of the package.
var f *framework.Framework

// bridgeInactivity is the eviction API bridge's inactivity time-out in
// the suite, short enough to watch a withdrawal.
const bridgeInactivity = 15 * time.Second

func TestMain(m *testing.M) {
	// A directory apart from the other suites', whose clusters may still
	// be in theirs when go test runs the packages.
	flag.Parse()
	dir := "../../../_output/e2e-lifecycle"
	if framework.UpstreamControllers() {
		dir += "-upstream"
	}
	if err := flag.Set("cluster-dir", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(framework.RunWith(m, &f, func(cfg *localcluster.Config) {
		cfg.Lifecycle = true
		// -lifecycle-controllers=upstream: Kubernetes 1.38's controllers,
		// ours for the actors only, as a 1.38 cluster runs them.
		cfg.UpstreamControllers = framework.UpstreamControllers()
		// The lifecycle overlay with the eviction API bridge, serving
		// kube-apiserver only; it acts in the namespaces that opt in.
		cfg.Overlay = localcluster.LifecycleBridgeOverlay
		cfg.ServerArgs = append(framework.NodeDrainArgs(), "--v=2", "--eviction-bridge-inactivity-timeout="+bridgeInactivity.String())
		// Karpenter, whose evictions go through the bridge; node repair
		// reboots a node on a condition of its KWOK provider.
		cfg.Karpenter = true
		cfg.KarpenterEnv = []string{framework.KarpenterNodeRepair}
	}))
}
