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
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

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
