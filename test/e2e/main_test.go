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

// Package e2e exercises evictionrequest-apiserver through the kube-apiserver
// aggregator on the local control plane, with the generated clientset and the
// real kubectl, the way users reach it.
package e2e

import (
	"os"
	"testing"
	"time"

	"github.com/evictionrequest/apiserver/internal/localcluster"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// f is the cluster of the suite.
var f *framework.Framework

// bridgeInactivity is the eviction API bridge's inactivity time-out in
// the suite, short enough to watch a withdrawal.
const bridgeInactivity = 15 * time.Second

// completedTTL is how long the suite's server keeps a completed request,
// short enough to watch one go.
const completedTTL = 90 * time.Second

func TestMain(m *testing.M) {
	// The eviction API bridge is installed as users install it: the
	// default overlay's bridge scenario, serving kube-apiserver only; it
	// acts in the namespaces that opt in.
	os.Exit(framework.RunWith(m, &f, func(cfg *localcluster.Config) {
		if cfg.Overlay == localcluster.DefaultOverlay {
			cfg.Overlay = localcluster.BridgeOverlay
		}
		cfg.ServerArgs = append(cfg.ServerArgs, "--eviction-bridge-inactivity-timeout="+bridgeInactivity.String(),
			"--completed-evictionrequest-ttl="+completedTTL.String())
		// Karpenter, whose evictions go through the bridge; node repair
		// reboots a node on a condition of its KWOK provider.
		cfg.Karpenter = true
		cfg.KarpenterEnv = []string{framework.KarpenterNodeRepair}
	}))
}
