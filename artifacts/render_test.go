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
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// testCerts stands in for every certificate file, each its own path.
var testCerts = func() map[string][]byte {
	files := map[string][]byte{}
	for _, name := range CertFiles {
		files[name] = []byte("placeholder " + name)
	}
	return files
}()

func render(t *testing.T, overlay string) []*unstructured.Unstructured {
	t.Helper()
	objects, err := Render(overlay, testCerts)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func find(objects []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, obj := range objects {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	return nil
}

func deployments(t *testing.T, objects []*unstructured.Unstructured) map[string]*appsv1.Deployment {
	t.Helper()
	found := map[string]*appsv1.Deployment{}
	for _, obj := range objects {
		if obj.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d); err != nil {
			t.Fatal(err)
		}
		found[d.Name] = &d
	}
	return found
}

// Every overlay renders, runs hardened pods, and verifies the server's
// certificate unless it is the dev overlay; the lifecycle overlay runs the
// controllers of kube-apiserver's own API instead of our server.
func TestEveryOverlayRendersHardened(t *testing.T) {
	for _, overlay := range Overlays {
		t.Run(overlay, func(t *testing.T) {
			objects := render(t, overlay)
			workloads := []string{"evictionrequest-controller", "evictionrequest-surge-interceptor"}
			if overlay != "lifecycle" {
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

func allows(rules []rbacv1.PolicyRule, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func checkHardened(t *testing.T, name string, spec corev1.PodSpec) {
	t.Helper()
	sc := spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod security context %+v, want non-root and RuntimeDefault seccomp", name, sc)
	}
	if spec.PriorityClassName == "" {
		t.Errorf("%s: no priority class", name)
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

func TestDefaultTrustsTheCAOfItsServingCertificate(t *testing.T) {
	objects := render(t, "default")
	var secret *unstructured.Unstructured
	for _, obj := range objects {
		if obj.GetKind() == "Secret" && strings.HasPrefix(obj.GetName(), "evictionrequest-apiserver-tls") {
			secret = obj
		}
	}
	if secret == nil {
		t.Fatal("no serving certificate Secret")
	}
	caBundle, _, _ := unstructured.NestedString(find(objects, "APIService", "v1alpha1.coordination.k8s.io").Object, "spec", "caBundle")
	// kustomize wraps long base64 lines, which decoders skip.
	if got, _ := base64.StdEncoding.DecodeString(caBundle); string(got) != string(testCerts[ServingCertDir+"/ca.crt"]) {
		t.Errorf("caBundle holds %q, want the CA of the certificate files %q", got, testCerts[ServingCertDir+"/ca.crt"])
	}
	d := deployments(t, objects)["evictionrequest-apiserver"]
	var mounted string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "tls" && v.Secret != nil {
			mounted = v.Secret.SecretName
		}
	}
	if mounted != secret.GetName() {
		t.Errorf("the server mounts Secret %q, want the generated %q", mounted, secret.GetName())
	}
	if find(objects, "PersistentVolumeClaim", "evictionrequest-etcd") == nil || *d.Spec.Replicas != 1 {
		t.Errorf("default: want one replica with the embedded etcd on a PersistentVolumeClaim")
	}
}

func TestHARunsReplicasOnAnEtcdCluster(t *testing.T) {
	objects := render(t, "ha")
	d := deployments(t, objects)["evictionrequest-apiserver"]
	if *d.Spec.Replicas < 2 {
		t.Errorf("replicas %d, want 2 or more", *d.Spec.Replicas)
	}
	args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
	if n := len(regexp.MustCompile(`evictionrequest-etcd-\d\.`).FindAllString(args, -1)); n != 3 || strings.Contains(args, "--embedded-etcd-data-dir") {
		t.Errorf("args %q, want --etcd-servers with three members and no embedded etcd", args)
	}
	if find(objects, "PersistentVolumeClaim", "evictionrequest-etcd") != nil {
		t.Error("the embedded etcd's volume is still there")
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			t.Errorf("the server still mounts volume %s", v.Name)
		}
	}
	if len(d.Spec.Template.Spec.TopologySpreadConstraints) == 0 {
		t.Error("the replicas are not spread")
	}
	var etcd appsv1.StatefulSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(objects, "StatefulSet", "evictionrequest-etcd").Object, &etcd); err != nil {
		t.Fatal(err)
	}
	if *etcd.Spec.Replicas != 3 {
		t.Errorf("etcd members %d, want 3", *etcd.Spec.Replicas)
	}
	if find(objects, "PodDisruptionBudget", "evictionrequest-apiserver") == nil {
		t.Error("no PodDisruptionBudget for the server")
	}
	checkEtcdTLS(t, objects, args, etcd)
}

// checkEtcdTLS: the server reaches etcd over TLS with the client
// certificate, and the members verify clients and peers, each mounting its
// own Secret of etcd's CA.
func checkEtcdTLS(t *testing.T, objects []*unstructured.Unstructured, serverArgs string, etcd appsv1.StatefulSet) {
	t.Helper()
	if strings.Contains(serverArgs, "http://") || !strings.Contains(serverArgs, "--etcd-certfile=") || !strings.Contains(serverArgs, "--etcd-cafile=") {
		t.Errorf("server args %q, want https etcd servers with a client certificate and etcd's CA", serverArgs)
	}
	etcdArgs := strings.Join(etcd.Spec.Template.Spec.Containers[0].Args, " ")
	for _, flag := range []string{"--client-cert-auth", "--peer-client-cert-auth", "--trusted-ca-file=", "--peer-trusted-ca-file=", "--quota-backend-bytes="} {
		if !strings.Contains(etcdArgs, flag) {
			t.Errorf("etcd args lack %s", flag)
		}
	}
	if strings.Contains(etcdArgs, "=http://0.0.0.0:2379") || strings.Contains(etcdArgs, "=http://0.0.0.0:2380") || strings.Contains(etcdArgs, "=http://evictionrequest-etcd") {
		t.Errorf("etcd args %q serve clients or peers in plaintext", etcdArgs)
	}
	for secret, want := range map[string]string{"evictionrequest-etcd-member-tls": "member.crt", "evictionrequest-etcd-client-tls": "client.crt"} {
		var found *unstructured.Unstructured
		for _, obj := range objects {
			if obj.GetKind() == "Secret" && strings.HasPrefix(obj.GetName(), secret) {
				found = obj
			}
		}
		if found == nil {
			t.Errorf("no Secret %s", secret)
			continue
		}
		crt, _, _ := unstructured.NestedString(found.Object, "data", "tls.crt")
		if got, _ := base64.StdEncoding.DecodeString(crt); string(got) != string(testCerts[EtcdCertDir+"/"+want]) {
			t.Errorf("Secret %s holds tls.crt %q, want certs/%s", secret, got, want)
		}
	}
}

func TestCertManagerInjectsTheCA(t *testing.T) {
	objects := render(t, "cert-manager")
	apiService := find(objects, "APIService", "v1alpha1.coordination.k8s.io")
	if got := apiService.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "evictionrequest-system/evictionrequest-apiserver" {
		t.Errorf("inject-ca-from = %q", got)
	}
	cert := find(objects, "Certificate", "evictionrequest-apiserver")
	if secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); secretName != "evictionrequest-apiserver-tls" {
		t.Errorf("the Certificate writes Secret %q, want the one the server mounts", secretName)
	}
}

// The policy's allow-list of k8s.io interceptor names is the server's.
func TestThePolicyAllowsTheServersKubernetesInterceptors(t *testing.T) {
	policy := find(render(t, "default"), "ValidatingAdmissionPolicy", "evictionrequest-pod-interceptors")
	validations, _, _ := unstructured.NestedSlice(policy.Object, "spec", "validations")
	found := false
	for _, v := range validations {
		expression, _ := v.(map[string]any)["expression"].(string)
		if !strings.Contains(expression, "k8s.io") {
			continue
		}
		found = true
		names := sets.New[string]()
		for _, m := range regexp.MustCompile(`'([a-z.]+\.k8s\.io)'`).FindAllStringSubmatch(expression, -1) {
			names.Insert(m[1])
		}
		names.Delete(".k8s.io")
		if !names.Equal(validation.AllowedKubernetesInterceptors) {
			t.Errorf("the policy allows %v, the server %v", sets.List(names), sets.List(validation.AllowedKubernetesInterceptors))
		}
	}
	if !found {
		t.Error("no validation of k8s.io names in the policy")
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

// Users edit requests but only interceptors write their status; the
// roles an interceptor, a requester and a drainer need ship ready to bind.
func TestUserRoles(t *testing.T) {
	objects := render(t, "default")
	rulesOf := func(name string) []rbacv1.PolicyRule {
		obj := find(objects, "ClusterRole", name)
		if obj == nil {
			t.Fatalf("no ClusterRole %s", name)
		}
		var role rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
			t.Fatal(err)
		}
		return role.Rules
	}
	if allows(rulesOf("evictionrequest-edit"), "evictionrequests/status", "update") {
		t.Error("the aggregate-to-edit role lets every editor write the status interceptors own")
	}
	for role, want := range map[string][]string{
		"evictionrequest-interceptor": {"evictionrequests/status update", "pods delete"},
		"evictionrequest-requester":   {"evictionrequests create", "pods delete"},
		"evictionrequest-drainer":     {"nodes patch"},
	} {
		for _, w := range want {
			resource, verb, _ := strings.Cut(w, " ")
			if !allows(rulesOf(role), resource, verb) {
				t.Errorf("%s does not allow %s", role, w)
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

// The eviction-bridge components add, to the overlays of each API, a
// webhook on pods/eviction that is safe by default (Ignore, NoneOnDryRun, a
// short time-out, opted-in namespaces, exempt identities) and calls the
// component that serves the bridge, which they turn on, trust and authorize.
func TestTheEvictionBridgeComponents(t *testing.T) {
	for overlay, component := range map[string]string{
		"default": "eviction-bridge", "ha": "eviction-bridge", "cert-manager": "eviction-bridge", "dev": "eviction-bridge",
		"lifecycle": "eviction-bridge-lifecycle",
	} {
		t.Run(overlay, func(t *testing.T) {
			objects, err := RenderWith(overlay, Install{Components: []string{component}}, testCerts)
			if err != nil {
				t.Fatal(err)
			}
			obj := find(objects, "ValidatingWebhookConfiguration", "evictionrequest-eviction-bridge")
			if obj == nil {
				t.Fatal("no webhook")
			}
			var config admissionregistrationv1.ValidatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &config); err != nil {
				t.Fatal(err)
			}
			w := config.Webhooks[0]
			if w.Name != bridge.WebhookName {
				t.Errorf("webhook %q, want %q, which the alerts and the dashboard read", w.Name, bridge.WebhookName)
			}
			if *w.FailurePolicy != admissionregistrationv1.Ignore || *w.SideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun ||
				*w.TimeoutSeconds > 10 || len(w.MatchConditions) == 0 {
				t.Errorf("webhook failurePolicy %v, sideEffects %v, timeout %ds, %d matchConditions", *w.FailurePolicy, *w.SideEffects, *w.TimeoutSeconds, len(w.MatchConditions))
			}
			if r := w.Rules[0]; !slices.Equal(r.Resources, []string{"pods/eviction"}) || !slices.Equal(r.Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) {
				t.Errorf("rule %+v, want CREATE pods/eviction", r)
			}
			if got := w.NamespaceSelector.MatchLabels[bridge.NamespaceLabel]; got != bridge.NamespaceOptIn {
				t.Errorf("namespace selector %+v, want the opt-in label", w.NamespaceSelector)
			}
			service := w.ClientConfig.Service
			dep := deployments(t, objects)[service.Name]
			if dep == nil || *service.Path != bridge.Path {
				t.Fatalf("the webhook calls %s%s, served by no Deployment of the overlay", service.Name, *service.Path)
			}
			args := dep.Spec.Template.Spec.Containers[0].Args
			for _, want := range []string{"--enable-eviction-bridge", "--eviction-bridge-webhook-configuration=" + config.Name} {
				if !slices.Contains(args, want) {
					t.Errorf("Deployment %s lacks %s: %v", dep.Name, want, args)
				}
			}
			binding := find(objects, "ClusterRoleBinding", dep.Name+":eviction-bridge")
			if subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects"); len(subjects) != 1 ||
				subjects[0].(map[string]any)["name"] != dep.Spec.Template.Spec.ServiceAccountName {
				t.Errorf("the bridge's RBAC binds %v, want the service account of %s", subjects, dep.Name)
			}
			if overlay == "lifecycle" {
				if find(objects, "Service", service.Name) == nil || find(objects, "Certificate", "evictionrequest-eviction-bridge") == nil {
					t.Error("the lifecycle overlay's bridge has no Service or no certificate")
				}
			}
		})
	}
}
