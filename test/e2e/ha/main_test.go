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

// Package ha holds the e2e tests that kill, freeze and restart processes of
// the local control plane, on a cluster of their own that deploys the ha
// overlay: two replicas of the server behind the one APIService, storing
// in a three-member etcd, and beside them the lifecycle overlay's
// evictionrequest-controller on Kubernetes' lifecycle.k8s.io. They run one at a time, since each disturbs the
// whole cluster, and each leaves the cluster whole again.
package ha

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// f is the cluster of the package.
var f *framework.Framework

func TestMain(m *testing.M) {
	// A directory apart from the main suite's, whose cluster may still be
	// in its directory when go test runs the packages.
	for name, value := range map[string]string{"cluster-dir": "../../../_output/e2e-ha", "overlay": "ha-bridge"} {
		if err := flag.Set(name, value); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	// The ha-bridge overlay, whose server replicas serve the eviction API
	// bridge to kube-apiserver only, and the lifecycle overlay's
	// evictionrequest-controller beside them, in their namespace: both
	// APIs, as an admin who installs both overlays runs them.
	os.Exit(framework.RunWith(m, &f, func(cfg *localcluster.Config) {
		cfg.LifecycleController = true
	}))
}
