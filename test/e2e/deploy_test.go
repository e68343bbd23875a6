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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// certFiles issues the certificate files the overlays read for namespace,
// as `make certs` does.
func certFiles(t *testing.T, namespace string) map[string][]byte {
	t.Helper()
	files, err := artifacts.IssueServingCertFiles(namespace, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, issue := range []func(string, time.Duration) (map[string][]byte, error){artifacts.IssueEtcdCertFiles, artifacts.IssueBridgeClientCertFiles} {
		more, err := issue(namespace, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(files, more)
	}
	return files
}

// installCRDs installs the CustomResourceDefinitions files of the module
// pinned in hack/tools/<tool>, read from the Go module cache (dir, under
// the module), and waits until groupVersion is served.
func installCRDs(t *testing.T, tool, module, dir, groupVersion string, files ...string) {
	t.Helper()
	// go mod download, not go list -m: on a fresh machine the module is not
	// in the cache yet, and go list -m reports an empty directory for it.
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = filepath.Join("..", "..", "hack", "tools", tool)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("downloading the module %s: %v", module, err)
	}
	var downloaded struct{ Dir, Error string }
	if err := json.Unmarshal(out, &downloaded); err != nil {
		t.Fatalf("reading go mod download's answer %q: %v", out, err)
	}
	if downloaded.Dir == "" {
		t.Fatalf("go mod download did not download the module %s: %s", module, downloaded.Error)
	}
	var crds []*unstructured.Unstructured
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(downloaded.Dir, dir, name))
		if err != nil {
			t.Fatal(err)
		}
		objects, err := artifacts.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, objects...)
	}
	if err := f.Apply(t.Context(), crds, metav1.ApplyOptions{FieldManager: "e2e", Force: true}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, groupVersion+" to be served", func(ctx context.Context) error {
		_, err := f.Kube.Discovery().ServerResourcesForGroupVersion(groupVersion)
		return err
	})
}

// Every overlay of artifacts/ renders, and kube-apiserver (with our API,
// the admission policies and the CRDs of cert-manager and of the
// Prometheus Operator, for the overlays that use them) accepts every
// object of it in a server-side dry-run apply: as it is, and installed in
// another namespace through artifacts/examples/namespace where an overlay
// can move.
func TestEveryOverlayPassesAServerSideDryRun(t *testing.T) {
	installCRDs(t, "cert-manager", "github.com/cert-manager/cert-manager", filepath.Join("deploy", "crds"), "cert-manager.io/v1",
		"cert-manager.io_certificates.yaml", "cert-manager.io_issuers.yaml")
	installCRDs(t, "prometheus-operator", "github.com/prometheus-operator/prometheus-operator", filepath.Join("example", "prometheus-operator-crd"),
		"monitoring.coreos.com/v1", "monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_podmonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml")
	const otherNamespace = "team-evictions"
	createNamespace(t, otherNamespace)
	for _, ns := range []string{artifacts.Namespace, otherNamespace} {
		certs := certFiles(t, ns)
		for _, overlay := range artifacts.Overlays {
			if ns != artifacts.Namespace && !artifacts.MovesNamespace(overlay) {
				continue
			}
			t.Run(overlay+" in "+ns, func(t *testing.T) {
				install := artifacts.Install{}
				if ns != artifacts.Namespace {
					install.Namespace = ns
				}
				objects, err := artifacts.RenderWith(overlay, install, certs)
				if err != nil {
					t.Fatal(err)
				}
				// As the manager of what the harness applied, so that the dry run
				// is that of this overlay applied in place of the deployed one.
				if err := f.Apply(t.Context(), objects, metav1.ApplyOptions{FieldManager: localcluster.FieldManager, Force: true, DryRun: []string{metav1.DryRunAll}}); err != nil {
					t.Fatalf("overlay %s: %v", overlay, err)
				}
			})
		}
	}
}

// createNamespace creates namespace ns, deleted when the test ends: a dry
// run of objects in a namespace needs the namespace.
func createNamespace(t *testing.T, ns string) {
	t.Helper()
	if _, err := f.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := f.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
}

// The ValidatingAdmissionPolicy refuses a pod whose interceptor annotation
// the server would refuse, and accepts one it would accept, with a message
// that names the rule.
func TestInterceptorAnnotationPolicy(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	names := func(n int, suffix string) string {
		var list []string
		for i := 0; i < n; i++ {
			list = append(list, fmt.Sprintf("i%d.%s", i, suffix))
		}
		return strings.Join(list, ",")
	}
	for _, tc := range []struct {
		name, annotation string
		// rule is a part of the refusal's message; empty when accepted.
		rule string
	}{
		{"one name", "operator.example.com", ""},
		{"an ordered list, spaces around names", "fallback.example.com, deployment.apps.k8s.io , operator.example.com", ""},
		{"every allowed Kubernetes name", "replicaset.apps.k8s.io,deployment.apps.k8s.io,statefulset.apps.k8s.io,daemonset.apps.k8s.io,horizontalpodautoscaler.autoscaling.k8s.io,nodemaintenance.k8s.io", ""},
		{"blank", "  ", ""},
		{"100 names", names(100, "example.com"), ""},
		{"101 names", names(101, "example.com"), "at most 100 are allowed"},
		{"not a DNS subdomain", "Operator_1.example.com", `must be a DNS-1123 subdomain (lowercase alphanumerics, - and ., at most 253 characters, no empty names); not: "Operator_1.example.com"`},
		{"an empty name", "a.example.com,,b.example.com", "no empty names"},
		{"a name too long", strings.Repeat("a", 250) + ".example.com", "at most 253 characters"},
		{"a repeated name", "a.example.com,b.example.com,a.example.com", "must be unique; repeated: a.example.com"},
		{"a reserved name", "operator.example.com,actor-a.k8s.io", "reserved for Kubernetes components"},
		{"the bare reserved domain", "k8s.io", "reserved for Kubernetes components"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: ns, Annotations: map[string]string{v1alpha1.PodInterceptorsAnnotation: tc.annotation}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			}
			_, err := f.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			// The server's own verdict on the same annotation.
			if serverRefuses := len(serverVerdict(tc.annotation)) > 0; serverRefuses != (tc.rule != "") {
				t.Fatalf("the server refuses %q: %v, but the case expects refused = %v", tc.annotation, serverVerdict(tc.annotation), tc.rule != "")
			}
			if tc.rule == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
				t.Fatalf("got %v, want a refusal", err)
			}
			if !strings.Contains(err.Error(), tc.rule) || !strings.Contains(err.Error(), "evictionrequest-pod-interceptors") {
				t.Errorf("the refusal %q does not name the policy and %q", err, tc.rule)
			}
		})
	}

	// A pod keeps working with an annotation it had; a change to a bad one
	// is refused.
	pod := f.CreatePod(t, ns, "db-0", framework.PodOptions{Interceptors: []string{"operator.example.com"}})
	pod.Annotations[v1alpha1.PodInterceptorsAnnotation] = "operator.example.com,Bad"
	if _, err := f.Kube.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "DNS-1123") {
		t.Errorf("an update to a bad annotation: %v, want a refusal", err)
	}
}

// serverVerdict is how the server judges an annotation.
func serverVerdict(annotation string) field.ErrorList {
	var interceptors []coordination.Interceptor
	for _, name := range v1alpha1.PodInterceptorNames(map[string]string{v1alpha1.PodInterceptorsAnnotation: annotation}) {
		interceptors = append(interceptors, coordination.Interceptor{Name: name})
	}
	return validation.ValidateInterceptors(interceptors, field.NewPath("spec", "interceptors"))
}

// The server's own calls to kube-apiserver (here a pod list, as its
// controller and admission make) are classified by the FlowSchema of
// artifacts/ into workload-high, not into workload-low with the callers
// whose requests wait for them.
func TestServerCallsRunAtWorkloadHighPriority(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const namespace, name = serverNamespace, serverName
	config := f.ImpersonatingConfig(serviceaccount.MakeUsername(namespace, name), serviceaccount.MakeGroupNames(namespace)...)
	client, err := rest.HTTPClientFor(config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, config.Host+"/api/v1/pods?limit=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("listing pods as the server: %s", resp.Status)
	}

	schema, err := f.Kube.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	level, err := f.Kube.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, "workload-high", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID); got != string(schema.UID) {
		t.Errorf("matched FlowSchema UID %q, want %q (FlowSchema %s)", got, schema.UID, name)
	}
	if got := resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID); got != string(level.UID) {
		t.Errorf("priority level UID %q, want %q (workload-high)", got, level.UID)
	}
}
