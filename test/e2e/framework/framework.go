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

// Package framework gives the e2e tests a running local control plane and
// the helpers every test needs: namespaces, pods on kwok nodes, kubectl, and
// waiting for a condition.
package framework

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
)

var (
	binDir               = flag.String("bin-dir", "../../_output/bin", "Directory of the cluster binaries and evictionrequest-apiserver.")
	clusterDir           = flag.String("cluster-dir", "../../_output/e2e", "Directory of the e2e cluster; its logs/ stay for the failure report.")
	overlay              = flag.String("overlay", localcluster.DefaultOverlay, "Overlay of artifacts/ the e2e cluster deploys: default, or ha (two replicas of the server on a three-member etcd).")
	lifecycleControllers = flag.String("lifecycle-controllers", "ours",
		"On lifecycle.k8s.io, whose evictionrequest-controller and imperative-eviction-responder-controller run: ours, or upstream (Kubernetes 1.38's, with evictionrequest-controller running the actors only).")
)

// UpstreamControllers is true when the suite runs Kubernetes 1.38's
// eviction request controllers in place of evictionrequest-controller's
// (-lifecycle-controllers=upstream).
func UpstreamControllers() bool {
	return *lifecycleControllers == "upstream"
}

// OurControllersOnly skips a test of what evictionrequest-controller's own
// controllers do beyond the API (their events, metrics and wording) when
// the suite runs Kubernetes' own: the actors' tests run on both.
func OurControllersOnly(t *testing.T) {
	t.Helper()
	if UpstreamControllers() {
		t.Skip("a test of evictionrequest-controller's own controllers; the suite runs Kubernetes' (-lifecycle-controllers=upstream)")
	}
}

// Framework is the cluster every e2e test shares, reached through
// kube-apiserver as users reach it.
type Framework struct {
	*localcluster.Cluster
	// Kube is an admin clientset of kube-apiserver.
	Kube kubernetes.Interface
	// Clientset is the generated EvictionRequest clientset, through the aggregator.
	Clientset versioned.Interface
}

// Run starts the cluster, runs the tests and stops every process it
// started, whatever the tests did. It is the body of TestMain.
func Run(m *testing.M, f **Framework) int {
	return RunWith(m, f, nil)
}

// RunWith is Run on a cluster whose configuration mutate changes, such as
// one of the lifecycle.k8s.io API.
func RunWith(m *testing.M, f **Framework, mutate func(*localcluster.Config)) int {
	flag.Parse()
	ctx := context.Background()
	cfg := localcluster.Config{
		Dir:              *clusterDir,
		BinDir:           *binDir,
		Overlay:          *overlay,
		ServerArgs:       NodeDrainArgs(),
		SurgeInterceptor: true,
		Logf:             func(format string, args ...any) { fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...) },
	}
	if mutate != nil {
		mutate(&cfg)
	}
	cluster, err := localcluster.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the local control plane: %v\n", err)
		return 1
	}
	defer cluster.Stop()
	*f = New(cluster)
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: component logs are in %s\n", cluster.LogDir())
	}
	return code
}

// ImpersonatingConfig is the admin configuration acting as user.
func (f *Framework) ImpersonatingConfig(user string, groups ...string) *rest.Config {
	config := rest.CopyConfig(f.AdminConfig)
	config.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return config
}

// New is the framework of cluster, for a test that starts a cluster of its
// own beside its suite's.
func New(cluster *localcluster.Cluster) *Framework {
	// The configuration is the cluster's own: it always makes a clientset.
	clientset, _ := versioned.NewForConfig(cluster.AdminConfig)
	return &Framework{Cluster: cluster, Kube: cluster.Client, Clientset: clientset}
}

// BinDir is the directory of the binaries the suite's cluster runs.
func (f *Framework) BinDir() string {
	return *binDir
}
