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
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/evictionrequest/apiserver/artifacts"

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// parkedInterceptor is an interceptor nobody runs: a pod that declares it
// keeps its request open.
const parkedInterceptor = "parked.e2e.example.com"

// helmTimeout bounds a helm command.
const helmTimeout = 3 * time.Minute

// A values file with a key the chart does not have fails helm install with
// the schema's message, and installs nothing.
func TestHelmRefusesAMistypedValue(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), helmTimeout)
	defer cancel()
	out, err := f.Helm(ctx, "install", "mistyped", chart, "--namespace=mistyped", "--create-namespace",
		"--values="+ciValues("default"), "--set=apiserver.replica=2")
	if err == nil {
		t.Fatalf("helm install accepted apiserver.replica:\n%s", out)
	}
	if !strings.Contains(out, "additional properties 'replica' not allowed") {
		t.Errorf("helm install's error does not name the mistyped key:\n%s", out)
	}
	list, err := f.Helm(ctx, "list", "--all-namespaces", "--short")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(list, "mistyped") {
		t.Errorf("a refused install left a release:\n%s", list)
	}
}

// helm install made a working product: the APIService is Available (the
// suite's start waited for it), kubectl get evr answers, and a drain
// through the plugin completes. helm upgrade to two replicas with the
// eviction API bridge rolls out and keeps the stored EvictionRequests.
// The surge interceptor's participant rule is installed and kept by the
// upgrade; an upgrade with participants.enabled=false removes it, and
// nothing is added to pods after. helm uninstall removes everything it
// made but the Namespace, which the chart keeps on purpose.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	checkSurgeRule(t, true)
	ns := f.NewNamespace(t)
	f.MustKubectl(t, "get", "evr", "--all-namespaces")
	node := f.NewNode(t)
	f.CreatePod(t, ns, "web-0", framework.PodOptions{Node: node})
	if r := f.RunCommand(t, 2*time.Minute, "kubectl-evictionrequest", "drain", node, "--force", "--timeout=90s"); r.Err != nil {
		t.Fatalf("the drain through the plugin: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	kept := f.CreatePod(t, ns, "db-0", framework.PodOptions{Interceptors: []string{parkedInterceptor}})
	stored := f.CreateEvictionRequest(t, kept, "maintenance.example.com")

	upgrade(t)
	if got, err := f.EvictionRequests(ns).Get(t.Context(), stored.Name, metav1.GetOptions{}); err != nil || got.UID != stored.UID {
		t.Errorf("the EvictionRequest stored before the upgrade: %v, %v; want it kept", got, err)
	}
	checkSurgeRule(t, true)
	participantsOff(t)

	uninstall(t)
}

// upgrade upgrades the release to two replicas of the server and the
// eviction API bridge, serving kube-apiserver only as the chart requires
// (the ha-bridge scenario), and checks that they rolled out.
func upgrade(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	if err := f.UpgradeRelease(ctx, "--values="+ciValues("ha-bridge")); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Replicas()); n != 2 {
		t.Errorf("%d replicas of the server run after the upgrade, want 2", n)
	}
	dep, err := f.Kube.AppsV1().Deployments("evictionrequest-system").Get(ctx, "evictionrequest-apiserver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The harness runs the replicas (the release's Service points at
	// them), so the Deployment runs none, which would contend for the
	// Lease.
	args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " ")
	if *dep.Spec.Replicas != 0 || !strings.Contains(args, ",eviction-bridge") || !strings.Contains(args, "--eviction-bridge-client-ca-file=") {
		t.Errorf("the upgraded Deployment: %d replicas, args %s; want none in the cluster, and the bridge", *dep.Spec.Replicas, args)
	}
	webhook, err := f.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "evictionrequest-eviction-bridge", metav1.GetOptions{})
	if err != nil || len(webhook.Webhooks) != 1 || webhook.Webhooks[0].Name != bridge.WebhookName {
		t.Errorf("the bridge's webhook after the upgrade: %v, %v", webhook, err)
	}
	history, err := f.Helm(ctx, "history", release, "--namespace=evictionrequest-system")
	if err != nil || !strings.Contains(history, "Upgrade complete") {
		t.Errorf("helm history: %v\n%s", err, history)
	}
	f.MustKubectl(t, "get", "evr", "--all-namespaces")
}

// uninstall removes the release and checks what is left: nothing of what
// it made (every object of its manifest), but the Namespace, which the
// chart keeps on purpose (helm.sh/resource-policy: keep).
func uninstall(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	manifest, err := f.Helm(ctx, "get", "manifest", release, "--namespace=evictionrequest-system")
	if err != nil {
		t.Fatal(err)
	}
	objects, err := artifacts.Decode([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(f.Kube.Discovery()))
	get := func(ctx context.Context, obj *unstructured.Unstructured) error {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return err
		}
		_, err = f.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
		return err
	}
	for _, obj := range objects {
		if err := get(ctx, obj); err != nil {
			t.Fatalf("%s %s of the release before the uninstall: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	if err := f.UninstallRelease(ctx); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "the release's objects to be gone", func(ctx context.Context) error {
		for _, obj := range objects {
			err := get(ctx, obj)
			switch {
			case obj.GetKind() == "Namespace" && err != nil:
				return fmt.Errorf("the Namespace %s, which the chart keeps: %v", obj.GetName(), err)
			case obj.GetKind() != "Namespace" && !apierrors.IsNotFound(err):
				return fmt.Errorf("%s %s after the uninstall: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
		return nil
	})
	if len(objects) < 20 {
		t.Errorf("the release made %d objects; want the whole product", len(objects))
	}
	if _, err := f.Kube.Discovery().ServerResourcesForGroupVersion("coordination.k8s.io/v1alpha1"); err == nil {
		t.Error("kube-apiserver still serves coordination.k8s.io/v1alpha1 after the uninstall")
	}
}
