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

package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// TestMetricsAfterAnEviction evicts one pod and parks the Eviction of
// another with a responder that never answers, then reads
// evictionrequest-controller's /metrics: what the monitoring component's
// rules and dashboard read is there.
func TestMetricsAfterAnEviction(t *testing.T) {
	framework.OurControllersOnly(t)
	t.Parallel()
	ns := f.NewNamespace(t)
	const silent = "silent.example.com/responder"
	pod := f.CreatePod(t, ns, "evicted-0", framework.PodOptions{})
	evicted(t, pod, framework.RequestEviction(t, keptRequester(t), pod))
	parked := podWith(t, ns, "parked-0", corev1.EvictionResponder{Name: silent, Priority: ptr.To[int32](1000)})
	framework.RequestEviction(t, keptRequester(t), parked)
	parkedEviction := f.WaitForEviction(t, parked, "the silent responder's turn", framework.ResponderIs(silent, lifecyclev1alpha1.ResponderStateActive))

	active := `evictionrequest_lifecycle_controller_active_responder{responder="` + silent + `"}`
	metrics := framework.WaitForSample(t, func() framework.MetricSamples {
		return framework.ScrapeProcessMetrics(t, f.LifecycleController())
	}, active, 1)
	sample := func(name string) float64 { return metrics.Sample(t, name) }
	if v := sample(`evictionrequest_lifecycle_controller_eviction_duration_seconds_count{result="TargetEvicted"}`); v < 1 {
		t.Errorf("eviction_duration_seconds_count{result=TargetEvicted} = %v, want at least the eviction of this test", v)
	}
	if v := sample(`evictionrequest_lifecycle_controller_oldest_eviction_creation_timestamp_seconds`); v > float64(parkedEviction.CreationTimestamp.Unix()) {
		t.Errorf("oldest_eviction_creation_timestamp_seconds = %v, after the creation of the parked Eviction (%d)", v, parkedEviction.CreationTimestamp.Unix())
	}
	if v := sample(`leader_election_master_status{name="evictionrequest-controller"}`); v != 1 {
		t.Errorf("leader_election_master_status = %v, want 1 on the only replica", v)
	}
	// The KEP's metrics, one series per object.
	state := `evictionrequest_controller_responder_state{eviction="` + parkedEviction.Name + `",namespace="` + ns + `",responder="` + silent + `",state="Active",target_name="parked-0",target_type="pod"}`
	if v := sample(state); v != 1 {
		t.Errorf("%s = %v, want 1", state, v)
	}
	sample(`evictionrequest_controller_target_responders{eviction="` + parkedEviction.Name + `",namespace="` + ns + `",target_name="parked-0",target_type="pod"}`)
	framework.CheckMonitoredMetrics(t, metrics, "evictionrequest_lifecycle_controller_", "evictionrequest_evictor_", "leader_election_",
		"evictionrequest_controller_responder_state")
}

// evictionrequest-controller serves /metrics over HTTPS only to the callers
// kube-apiserver authorizes to get it, as kube-controller-manager does, and
// its health checks to anyone.
func TestMetricsAreServedOnlyToAuthorizedScrapers(t *testing.T) {
	t.Parallel()
	f.CheckMetricsAuthorization(t, f.LifecycleController())
}
