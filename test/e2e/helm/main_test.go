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

// Package helm installs, upgrades and removes the product with the real
// helm binary, from the chart, on a cluster of its own: helm creates every
// object, and the local control plane runs the workloads of what helm
// installed as local processes (localcluster.HelmInstall), so that what is
// tested is what helm install made. Its tests are named after Helm
// (go test -run Helm).
package helm

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// f is the cluster of the package, which runs the chart's release.
var f *framework.Framework

// chart is the chart's directory.
var chart, _ = filepath.Abs(filepath.Join("..", "..", "..", "charts", "evictionrequest"))

// release is the name of the suite's release.
const release = "evictionrequest"

func TestMain(m *testing.M) {
	if err := flag.Set("cluster-dir", "../../../_output/e2e-helm"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Our API on an etcd StatefulSet, one server replica to begin with:
	// the upgrade makes it two, which the embedded etcd would not allow.
	os.Exit(framework.RunWith(m, &f, func(cfg *localcluster.Config) {
		cfg.Helm = &localcluster.HelmInstall{Release: release, Chart: chart,
			Values: []string{ciValues("ha")}, Set: []string{"apiserver.replicas=1"}}
	}))
}

// ciValues is the values file of a scenario of the chart's ci/.
func ciValues(scenario string) string {
	return filepath.Join(chart, "ci", scenario+"-values.yaml")
}
