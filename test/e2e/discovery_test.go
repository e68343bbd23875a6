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

func TestDiscoveryListsEvictionRequestsBesideLeases(t *testing.T) {
	t.Parallel()
	out := f.MustKubectl(t, "api-resources", "--api-group=coordination.k8s.io", "--no-headers")
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		rows[fields[0]] = fields
	}
	evr, ok := rows["evictionrequests"]
	if !ok {
		t.Fatalf("evictionrequests missing from api-resources:\n%s", out)
	}
	if want := []string{"evictionrequests", "evr", "coordination.k8s.io/v1alpha1", "true", "EvictionRequest"}; strings.Join(evr, " ") != strings.Join(want, " ") {
		t.Errorf("evictionrequests row = %v, want %v", evr, want)
	}
	if _, ok := rows["leases"]; !ok {
		t.Errorf("the built-in leases are gone from api-resources:\n%s", out)
	}
}

func TestExplainDescribesTheSpec(t *testing.T) {
	t.Parallel()
	out := f.MustKubectl(t, "explain", "evictionrequest.spec")
	for _, want := range []string{"KIND:       EvictionRequest", "VERSION:    v1alpha1", "heartbeatDeadlineSeconds", "interceptors", "requesters", "target", "The minimum value is 600"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain evictionrequest.spec lacks %q:\n%s", want, out)
		}
	}
	out = f.MustKubectl(t, "explain", "evr.status.podEvictionStatus")
	if !strings.Contains(out, "failedAPIEvictionCounter") {
		t.Errorf("kubectl explain evr.status.podEvictionStatus lacks failedAPIEvictionCounter:\n%s", out)
	}
}
