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

package helm

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// helm install for Kubernetes' lifecycle.k8s.io, on a control plane of its
// own with that API on: evictionrequest-controller leads (its Lease has a
// holder) and a request is served: the default evictor evicts the pod of
// an EvictionRequest that names no responder.
func TestHelmInstallsTheLifecycleController(t *testing.T) {
	ctx := t.Context()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "_output", "e2e-helm-lifecycle"))
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := localcluster.Start(ctx, localcluster.Config{Dir: dir, BinDir: f.BinDir(), Lifecycle: true,
		Helm: &localcluster.HelmInstall{Release: release, Chart: chart, Values: []string{ciValues("lifecycle")}},
		Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Stop()
	lf := framework.New(cluster)
	framework.Eventually(t, framework.DefaultTimeout, "evictionrequest-controller to lead", func(ctx context.Context) error {
		lease, err := lf.Kube.CoordinationV1().Leases("evictionrequest-system").Get(ctx, "evictionrequest-controller", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder")
		}
		return nil
	})
	ns := lf.NewNamespace(t)
	pod := lf.CreatePod(t, ns, "web-0", framework.PodOptions{})
	framework.RequestEviction(t, lf.NewLifecycleRequester(t, "e2e.example.com/maintenance"), pod)
	lf.WaitForPodGone(t, ns, pod.Name)
}
