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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
)

func TestAnEvictionThatEndsIsTimedAndItsResponderTimeoutCounted(t *testing.T) {
	ev := wrappers.MakeEviction("pod-1-web", podWithResponders).Created(start).Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
		TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder("acme.io/backup", 1000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder(evictor, lifecycleutil.EvictorPriority, active).Started(evictor, start).Obj()
	f := newFixture(t, podWithResponders, ev, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())
	failed := metrics.EvictionDuration.WithLabelValues(metrics.ResultEvictionFailed)
	countBefore, _ := testutil.GetHistogramMetricCount(failed)
	sumBefore, _ := testutil.GetHistogramMetricValue(failed)
	timeoutsBefore, _ := testutil.GetCounterMetricValue(metrics.ResponderTimeouts)

	// The evictor, the last responder, misses its deadline: the Eviction fails.
	f.clock.Step(lifecycleutil.HeartbeatDeadline)
	f.syncEviction("pod-1-web")
	f.syncEviction("pod-1-web")

	count, _ := testutil.GetHistogramMetricCount(failed)
	sum, _ := testutil.GetHistogramMetricValue(failed)
	if count-countBefore != 1 || sum-sumBefore != lifecycleutil.HeartbeatDeadline.Seconds() {
		t.Errorf("eviction_duration_seconds{result=Failed} grew by %d observations summing %vs, want 1 of %vs",
			count-countBefore, sum-sumBefore, lifecycleutil.HeartbeatDeadline.Seconds())
	}
	if timeouts, _ := testutil.GetCounterMetricValue(metrics.ResponderTimeouts); timeouts-timeoutsBefore != 1 {
		t.Errorf("responder_timeouts_total grew by %v, want 1", timeouts-timeoutsBefore)
	}
}

func TestMetricsSnapshotCountsEvictionsAndFindsTheOldestInProgress(t *testing.T) {
	other := wrappers.MakePod("api").Obj()
	evicted := wrappers.MakeEviction("pod-1-api", other).Created(start.Add(-time.Hour)).
		Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, start).Obj()
	running := wrappers.MakeEviction("pod-1-web", podWithResponders).Created(start).
		TargetResponder("acme.io/surge", 10000, active).Obj()
	f := newFixture(t, podWithResponders, evicted, running, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj())

	want := metrics.Snapshot{
		ActiveResponders: map[string]int{"acme.io/surge": 1},
		ActiveRequesters: map[string]int{requester: 1},
		Evictions:        map[string]int{"TargetEvicted": 1, "InProgress": 1},
		OldestInProgress: start,
	}
	if diff := cmp.Diff(want, f.controller.MetricsSnapshot()); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

// The KEP's metrics, as /metrics serves them while the controller leads:
// one series per Eviction's responder, per request, and the refused
// evictions the default evictor counted.
func TestTheKEPsMetricsReportEachObject(t *testing.T) {
	ev := wrappers.MakeEviction("pod-1-web", podWithResponders).Created(start).
		TargetResponder("acme.io/surge", 10000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder(evictor, lifecycleutil.EvictorPriority, active).Started(evictor, start).
		ResponderMessage(evictor, `"web" pod deletion via the /eviction subresource failed (attempts=3): Cannot evict pod`).Obj()
	f := newFixture(t, podWithResponders, ev, wrappers.MakeLifecycleRequest("r1", podWithResponders, requester).Obj(),
		wrappers.MakeLifecycleRequest("r2", podWithResponders, "acme.io/other").Withdrawn().Obj())
	metrics.SetSource(f.controller)
	defer metrics.SetSource(nil)

	want := `
# HELP evictionrequest_controller_requester_intent [ALPHA] The intent and target of the EvictionRequest.
# TYPE evictionrequest_controller_requester_intent gauge
evictionrequest_controller_requester_intent{evictionrequest="r1",intent="Eviction",namespace="shop",requester="acme.io/drain",target_name="web",target_type="pod"} 1
evictionrequest_controller_requester_intent{evictionrequest="r2",intent="Withdrawn",namespace="shop",requester="acme.io/other",target_name="web",target_type="pod"} 1
# HELP evictionrequest_controller_responder_state [ALPHA] The state of each responder for the Eviction.
# TYPE evictionrequest_controller_responder_state gauge
evictionrequest_controller_responder_state{eviction="pod-1-web",namespace="shop",responder="acme.io/surge",state="Completed",target_name="web",target_type="pod"} 1
evictionrequest_controller_responder_state{eviction="pod-1-web",namespace="shop",responder="imperative-eviction.k8s.io/evictor",state="Active",target_name="web",target_type="pod"} 1
# HELP evictionrequest_controller_target_responders [ALPHA] The number of available responders for the target of the Eviction.
# TYPE evictionrequest_controller_target_responders gauge
evictionrequest_controller_target_responders{eviction="pod-1-web",namespace="shop",target_name="web",target_type="pod"} 2
# HELP imperative_eviction_responder_controller_failed_evictions_total [ALPHA] Number of evictions of the target of the Eviction that the Eviction API refused or failed, as the default evictor counts them.
# TYPE imperative_eviction_responder_controller_failed_evictions_total counter
imperative_eviction_responder_controller_failed_evictions_total{eviction="pod-1-web",namespace="shop",target_name="web",target_type="pod"} 3
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want),
		"evictionrequest_controller_requester_intent", "evictionrequest_controller_responder_state",
		"evictionrequest_controller_target_responders", "imperative_eviction_responder_controller_failed_evictions_total"); err != nil {
		t.Error(err)
	}
	metrics.SetSource(nil)
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(""), "evictionrequest_controller_responder_state"); err != nil {
		t.Errorf("a replica that does not lead reports: %v", err)
	}
}
