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
	"testing"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// TestMetricsAfterTheFlows drives one request to eviction and parks another
// with an interceptor, then reads the controller's metrics from the server's
// /metrics.
func TestMetricsAfterTheFlows(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	const (
		interceptor = "metrics.e2e.example.com"
		requester   = "metrics-requester.example.com"
	)
	ctx := t.Context()
	r := newRequester(t, requester)
	evicted := f.CreatePod(t, ns, "evicted-0", framework.PodOptions{})
	er, err := r.Request(ctx, evicted)
	if err != nil {
		t.Fatal(err)
	}
	f.WaitForCompletion(t, ns, er.Name, v1alpha1.CompleteReasonPodDeleted)
	parked := f.CreatePod(t, ns, "parked-0", framework.PodOptions{Interceptors: []string{interceptor}})
	parkedER, err := r.Request(ctx, parked)
	if err != nil {
		t.Fatal(err)
	}
	f.WaitUntilActive(t, ns, parkedER.Name, interceptor)

	active := `evictionrequest_controller_active_interceptor{interceptor="` + interceptor + `"}`
	metrics := framework.WaitForSample(t, func() framework.MetricSamples {
		return framework.ScrapeMetrics(t, f.ServerClientConfig(f.EvictionServer()))
	}, active, 1)
	sample := func(name string) float64 { return metrics.Sample(t, name) }
	if v := sample(`evictionrequest_controller_evictions_total{result="success"}`); v < 1 {
		t.Errorf("evictions{result=success} = %v, want at least the eviction of this test", v)
	}
	// Only the parked request is in progress; the evicted one is complete.
	if v := sample(`evictionrequest_controller_active_interceptor{interceptor="` + interceptor + `"}`); v != 1 {
		t.Errorf("active_interceptor{%s} = %v, want 1", interceptor, v)
	}
	if v := sample(`evictionrequest_controller_active_requester{requester="` + requester + `"}`); v != 1 {
		t.Errorf("active_requester{%s} = %v, want 1", requester, v)
	}
	if v := sample(`evictionrequest_controller_pod_interceptors{interceptor="` + interceptor + `"}`); v != 1 {
		t.Errorf("pod_interceptors{%s} = %v, want 1", interceptor, v)
	}
	if v := sample(`workqueue_adds_total{name="evictionrequests"}`); v < 2 {
		t.Errorf("workqueue_adds_total{name=evictionrequests} = %v, want the adds of these requests", v)
	}
	for _, name := range []string{"workqueue_depth", "workqueue_queue_duration_seconds_count", "workqueue_work_duration_seconds_count", "workqueue_retries_total"} {
		sample(name + `{name="evictionrequests"}`)
	}
	if v := sample(`evictionrequest_controller_request_duration_seconds_count{reason="PodDeleted"}`); v < 1 {
		t.Errorf("request_duration_seconds_count{reason=PodDeleted} = %v, want at least the request of this test", v)
	}
	// The parked request is in progress: the oldest one is no younger.
	if v := sample(`evictionrequest_controller_oldest_request_creation_timestamp_seconds`); v > float64(parkedER.CreationTimestamp.Unix()) {
		t.Errorf("oldest_request_creation_timestamp_seconds = %v, after the creation of the parked request (%d)", v, parkedER.CreationTimestamp.Unix())
	}
	if v := sample(`leader_election_master_status{name="evictionrequest-apiserver"}`); v != 1 {
		t.Errorf("leader_election_master_status = %v, want 1 on the only replica", v)
	}
	sample(`evictionrequest_controller_interceptor_timeouts_total`)
	// The KEP's metrics of lifecycle.k8s.io share the prefix of our
	// controller's.
	framework.CheckMonitoredMetrics(t, metrics, "evictionrequest_controller_", "leader_election_", "workqueue_",
		"!evictionrequest_controller_responder_state", "!evictionrequest_controller_requester_intent", "!evictionrequest_controller_target_responders")
	// What the certificate expiry alerts read.
	framework.CheckServingCertificateExpiry(t, metrics, "apiserver")

	// What the API-unavailable alert reads, on kube-apiserver.
	apiserver := framework.ScrapeMetrics(t, f.AdminConfig)
	if v, ok := apiserver.Value(`aggregator_unavailable_apiservice{name="v1alpha1.coordination.k8s.io"}`); !ok || v != 0 {
		t.Errorf("kube-apiserver's aggregator_unavailable_apiservice of our APIService = %v (reported: %v), want 0", v, ok)
	}
	framework.CheckMonitoredMetrics(t, apiserver, "aggregator_")
}
