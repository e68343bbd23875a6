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
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// helm install NAME CHART, no values of a user's (the harness's wiring of
// the Services to its local processes aside), on a control plane of its
// own: the chart generates the serving certificate and its CA, the server
// serves it and the aggregator trusts it (the cluster's start waits for
// the APIService to be Available), and an EvictionRequest gets its pod
// evicted. A second release, in another namespace under another name, is
// refused with a message that names the first, and installs nothing.
func TestHelmInstallsWithNoValues(t *testing.T) {
	ctx := t.Context()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "_output", "e2e-helm-defaults"))
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := localcluster.Start(ctx, localcluster.Config{Dir: dir, BinDir: f.BinDir(),
		Helm: &localcluster.HelmInstall{Release: release, Chart: chart}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Stop()
	df := framework.New(cluster)

	secret, err := df.Kube.CoreV1().Secrets("evictionrequest-system").Get(ctx, "evictionrequest-apiserver-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Secret of the generated serving certificate: %v", err)
	}
	if secret.Annotations["evictionrequest.github.io/not-after"] == "" || len(secret.Data["ca.crt"]) == 0 {
		t.Errorf("the generated Secret has annotations %v and keys %d; want not-after and the CA", secret.Annotations, len(secret.Data))
	}
	ns := df.NewNamespace(t)
	pod := df.CreatePod(t, ns, "web-0", framework.PodOptions{})
	df.CreateEvictionRequest(t, pod, "maintenance.example.com")
	df.WaitForPodGone(t, ns, pod.Name)

	helmCtx, cancel := context.WithTimeout(ctx, helmTimeout)
	defer cancel()
	out, err := cluster.Helm(helmCtx, "install", "second", chart, "--namespace=second", "--create-namespace")
	if err == nil {
		t.Fatalf("a second release installed:\n%s", out)
	}
	if !strings.Contains(out, "installed already as release "+release+" in namespace evictionrequest-system") {
		t.Errorf("helm install of a second release does not name the first:\n%s", out)
	}
	if list, err := cluster.Helm(helmCtx, "list", "--all-namespaces", "--short"); err != nil || strings.Contains(list, "second") {
		t.Errorf("the refused release is listed: %v\n%s", err, list)
	}
}
