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
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	coordinationapply "github.com/evictionrequest/apiserver/pkg/generated/applyconfiguration/coordination/v1alpha1"
)

// TestServerSideApplyMergesRequestersByName has two requesters apply only
// their own entry: spec.requesters is a map keyed by name, so both remain,
// each owned by its manager, and one withdrawing leaves the other.
func TestServerSideApplyMergesRequestersByName(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "db-0")
	client := f.EvictionRequests(ns)
	name := string(pod.UID)

	apply := func(manager, requester string) {
		t.Helper()
		spec := coordinationapply.EvictionRequestSpec().
			WithTarget(coordinationapply.EvictionTarget().WithPodRef(coordinationapply.LocalPodReference().WithName(pod.Name).WithUID(name)))
		if requester != "" {
			spec = spec.WithRequesters(coordinationapply.Requester().WithName(requester))
		}
		config := coordinationapply.EvictionRequest(name, ns).WithSpec(spec)
		if _, err := client.Apply(ctx, config, metav1.ApplyOptions{FieldManager: manager}); err != nil {
			t.Fatalf("apply by %s: %v", manager, err)
		}
	}
	requesters := func() []string {
		t.Helper()
		er, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range er.Spec.Requesters {
			names = append(names, r.Name)
		}
		sort.Strings(names)
		return names
	}

	apply("node-drain", "nodemaintenance.k8s.io")
	apply("descheduler", "descheduling.avalanche.io")
	if diff := cmp.Diff([]string{"descheduling.avalanche.io", "nodemaintenance.k8s.io"}, requesters()); diff != "" {
		t.Fatalf("requesters after two applies (-want +got):\n%s", diff)
	}

	er, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	managers := map[string]bool{}
	for _, entry := range er.ManagedFields {
		managers[entry.Manager] = true
	}
	if !managers["node-drain"] || !managers["descheduler"] {
		t.Errorf("managed fields list %v, want node-drain and descheduler", managers)
	}

	// The drain is canceled: its manager applies without its requester.
	apply("node-drain", "")
	if diff := cmp.Diff([]string{"descheduling.avalanche.io"}, requesters()); diff != "" {
		t.Errorf("requesters after node-drain withdrew (-want +got):\n%s", diff)
	}
}

// TestServerSideApplyOfStatusIgnoresSpec applies status through /status:
// the reset fields keep the spec out of it.
func TestServerSideApplyOfStatusIgnoresSpec(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "db-0")
	client := f.EvictionRequests(ns)
	created := f.CreateEvictionRequest(t, pod, "nodemaintenance.k8s.io")

	config := coordinationapply.EvictionRequest(created.Name, ns).
		WithSpec(coordinationapply.EvictionRequestSpec().WithRequesters(coordinationapply.Requester().WithName("sneaky.example.com"))).
		WithStatus(coordinationapply.EvictionRequestStatus().WithMessage("applied by an interceptor"))
	updated, err := client.ApplyStatus(ctx, config, metav1.ApplyOptions{FieldManager: "interceptor", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Status.Message != "applied by an interceptor" {
		t.Errorf("status.message = %q after apply of /status", updated.Status.Message)
	}
	if len(updated.Spec.Requesters) != 1 || updated.Spec.Requesters[0].Name != "nodemaintenance.k8s.io" {
		t.Errorf("apply of /status changed spec.requesters to %v", updated.Spec.Requesters)
	}
}
