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

package artifacts

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Every overlay renders, runs hardened pods, and verifies the server's
// certificate unless it is the dev overlay; the lifecycle overlays run the
// controllers of kube-apiserver's own API instead of our server.
func TestEveryOverlayRendersHardened(t *testing.T) {
	for _, overlay := range Overlays {
		t.Run(overlay, func(t *testing.T) {
			objects := render(t, overlay)
			workloads := []string{"evictionrequest-controller", "evictionrequest-surge-interceptor"}
			if !strings.HasPrefix(overlay, "lifecycle") {
				workloads = []string{"evictionrequest-apiserver", "evictionrequest-surge-interceptor"}
				checkAPIService(t, objects, overlay == "dev")
			}
			deps := deployments(t, objects)
			for _, name := range workloads {
				d := deps[name]
				if d == nil {
					t.Errorf("no Deployment %s", name)
					continue
				}
				checkHardened(t, name, d.Spec.Template.Spec)
			}
		})
	}
}

// checkAPIService checks the APIService of our server and the policy on
// the pods' interceptor annotation.
func checkAPIService(t *testing.T, objects []*unstructured.Unstructured, insecureWanted bool) {
	t.Helper()
	apiService := find(objects, "APIService", "v1alpha1.coordination.k8s.io")
	if apiService == nil {
		t.Fatal("no APIService")
	}
	insecure, _, _ := unstructured.NestedBool(apiService.Object, "spec", "insecureSkipTLSVerify")
	if insecure != insecureWanted {
		t.Errorf("insecureSkipTLSVerify = %v", insecure)
	}
	for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if find(objects, kind, "evictionrequest-pod-interceptors") == nil {
			t.Errorf("no %s", kind)
		}
	}
}

// The lifecycle overlay deploys only what kube-apiserver's own API needs:
// no APIService, no etcd, no server; the controller may write Evictions
// and their status.
func TestLifecycleDeploysOnlyTheControllers(t *testing.T) {
	objects := render(t, "lifecycle")
	for _, kind := range []string{"APIService", "StatefulSet", "PersistentVolumeClaim", "Service"} {
		for _, obj := range objects {
			if obj.GetKind() == kind {
				t.Errorf("the lifecycle overlay has %s %s", kind, obj.GetName())
			}
		}
	}
	if _, ok := deployments(t, objects)["evictionrequest-apiserver"]; ok {
		t.Error("the lifecycle overlay runs evictionrequest-apiserver")
	}
	role := find(objects, "ClusterRole", "evictionrequest-controller")
	if role == nil {
		t.Fatal("no ClusterRole evictionrequest-controller")
	}
	var rbac rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(role.Object, &rbac); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ resource, verb string }{
		{"evictions", "create"}, {"evictions", "patch"}, {"evictions/status", "patch"},
		{"evictionrequests/status", "patch"}, {"pods/eviction", "create"},
	} {
		if !allows(rbac.Rules, want.resource, want.verb) {
			t.Errorf("the controller may not %s %s", want.verb, want.resource)
		}
	}
}

func checkHardened(t *testing.T, name string, spec corev1.PodSpec) {
	t.Helper()
	sc := spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod security context %+v, want non-root and RuntimeDefault seccomp", name, sc)
	}
	// The built-in class the metrics-server and descheduler charts use:
	// every cluster has it, and a drain's pods rank below it.
	if spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("%s: priority class %q, want system-cluster-critical", name, spec.PriorityClassName)
	}
	if spec.NodeSelector[corev1.LabelOSStable] != "linux" {
		t.Errorf("%s: node selector %v, want %s=linux (the image is linux only)", name, spec.NodeSelector, corev1.LabelOSStable)
	}
	for _, c := range spec.Containers {
		csc := c.SecurityContext
		if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem ||
			csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("%s/%s: container security context %+v", name, c.Name, csc)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s/%s: resources %+v, want requests and limits of CPU and memory", name, c.Name, c.Resources)
		}
		if c.LivenessProbe == nil || c.ReadinessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet == nil {
			t.Errorf("%s/%s: liveness %+v, readiness %+v", name, c.Name, c.LivenessProbe, c.ReadinessProbe)
		}
		if c.StartupProbe == nil || c.StartupProbe.HTTPGet == nil {
			t.Errorf("%s/%s: no startup probe: a slow start would be killed by the liveness probe", name, c.Name)
		}
		if c.Resources.Requests.StorageEphemeral().IsZero() || c.Resources.Limits.StorageEphemeral().IsZero() {
			t.Errorf("%s/%s: resources %+v, want requests and limits of ephemeral storage", name, c.Name, c.Resources)
		}
	}
}

// Every overlay deploys the image the release component pins, so that
// `kubectl apply -k` on a release tag pulls an image that exists.
func TestEveryOverlayPinsTheReleaseImage(t *testing.T) {
	want, err := ReleaseImage()
	if err != nil {
		t.Fatal(err)
	}
	for _, overlay := range Overlays {
		for name, d := range deployments(t, render(t, overlay)) {
			for _, c := range d.Spec.Template.Spec.Containers {
				if strings.HasPrefix(c.Image, ImageName) || (strings.Contains(c.Image, "/"+ImageName+":") && c.Image != want) {
					t.Errorf("overlay %s, Deployment %s, container %s: image %s, want %s", overlay, name, c.Name, c.Image, want)
				}
			}
		}
	}
}

// Every Deployment of several replicas has a PodDisruptionBudget that lets
// one go at a time.
func TestReplicatedDeploymentsHaveABudget(t *testing.T) {
	for _, overlay := range Overlays {
		objects := render(t, overlay)
		for name, d := range deployments(t, objects) {
			if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
				continue
			}
			if find(objects, "PodDisruptionBudget", name) == nil {
				t.Errorf("overlay %s: Deployment %s has %d replicas and no PodDisruptionBudget", overlay, name, *d.Spec.Replicas)
			}
		}
	}
}
