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

package localcluster

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/evictionrequest/apiserver/artifacts"
)

// haEtcd is the etcd StatefulSet of the ha overlay as it renders.
func haEtcd(t *testing.T, secure *etcdTLS) *appsv1.StatefulSet {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range artifacts.CertFiles {
		files[name] = []byte("placeholder")
	}
	maps.Copy(files, secure.files)
	objects, err := artifacts.Render("ha", files)
	if err == nil {
		for _, obj := range objects {
			if obj.GetKind() == "StatefulSet" && obj.GetName() == serverEtcdName {
				var set appsv1.StatefulSet
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &set); err != nil {
					t.Fatal(err)
				}
				return &set
			}
		}
	}
	t.Fatalf("no StatefulSet %s in the ha overlay: %v", serverEtcdName, err)
	return nil
}

// The local members take the TLS flags of the overlay's StatefulSet, its
// Secret's files mapped to the local ones; a StatefulSet serving plain HTTP
// gets none.
func TestMembersTakeTheTLSFlagsOfTheStatefulSet(t *testing.T) {
	secure, err := newEtcdTLS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	set := haEtcd(t, secure)
	m, err := secure.membersOf(set)
	if err != nil || m == nil {
		t.Fatalf("membersOf: %v, %v", m, err)
	}
	for _, want := range []string{"--client-cert-auth", "--peer-client-cert-auth", "--cert-file=" + secure.memberCert,
		"--peer-key-file=" + secure.memberKey, "--trusted-ca-file=" + secure.caFile} {
		if !slices.Contains(m.args, want) {
			t.Errorf("member args %v lack %s", m.args, want)
		}
	}
	container := &set.Spec.Template.Spec.Containers[0]
	container.Args = slices.DeleteFunc(container.Args, func(arg string) bool { return arg == "--client-cert-auth" })
	if m, _ := secure.membersOf(set); slices.Contains(m.args, "--client-cert-auth") {
		t.Error("a flag taken out of the StatefulSet stayed on the members")
	}
	for i, arg := range container.Args {
		container.Args[i] = strings.Replace(arg, "--listen-client-urls=https://", "--listen-client-urls=http://", 1)
	}
	if m, err := secure.membersOf(set); m != nil || err != nil {
		t.Errorf("a StatefulSet serving plain HTTP: %v, %v; want no TLS", m, err)
	}
}
