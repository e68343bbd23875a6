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
	"strings"
	"testing"
)

func TestKubectlGetPrintsTheColumns(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "web-0")
	er := f.CreateEvictionRequest(t, pod, "nodemaintenance.k8s.io", "descheduling.avalanche.io")

	out := f.MustKubectl(t, "get", "evr", "-n", ns)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get evr printed %d lines, want a header and one row:\n%s", len(lines), out)
	}
	header := strings.Join(strings.Fields(lines[0]), " ")
	if want := "NAME POD REQUESTERS ACTIVE INTERCEPTOR COMPLETE FAILED EVICTIONS AGE"; header != want {
		t.Errorf("header = %q, want %q", header, want)
	}
	row := strings.Fields(lines[1])
	if row[0] != er.Name || row[1] != "web-0" || row[2] != "nodemaintenance.k8s.io,descheduling.avalanche.io" {
		t.Errorf("row = %v, want name %s, pod web-0 and both requesters", row, er.Name)
	}

	wide := f.MustKubectl(t, "get", "evr", "-n", ns, "-o", "wide")
	for _, column := range []string{"INTERCEPTORS", "CANCELLATION", "HEARTBEAT", "MESSAGE", parkedInterceptor, "Allow"} {
		if !strings.Contains(wide, column) {
			t.Errorf("kubectl get evr -o wide lacks %q:\n%s", column, wide)
		}
	}
}

func TestKubectlDescribe(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	er := f.CreateEvictionRequest(t, parkedPod(t, ns, "web-0"), "nodemaintenance.k8s.io")

	out := f.MustKubectl(t, "describe", "evictionrequest", "-n", ns, er.Name)
	for _, want := range []string{"Name:         " + er.Name, "Kind:         EvictionRequest", "Requesters:", "nodemaintenance.k8s.io", "Pod Ref:", "web-0", "Eviction Request Cancellation Policy:  Allow"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe lacks %q:\n%s", want, out)
		}
	}
}
