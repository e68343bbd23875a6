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

package main

import (
	"math"
	"testing"
)

func TestWebhookLatencyIsReadFromTheBucketsOfTheDrain(t *testing.T) {
	before := webhookHistogram{0.001: 5, 0.005: 5, 0.01: 5, math.Inf(1): 5}
	after := webhookHistogram{0.001: 15, 0.005: 95, 0.01: 105, math.Inf(1): 105}
	got, err := after.since(before)
	if err != nil {
		t.Fatal(err)
	}
	// 100 calls: 10 under 1 ms, 80 between 1 and 5 ms, 10 between 5 and 10 ms.
	want := webhookLatency{calls: 100, p50: 0.003, p99: 0.0095}
	if got.calls != want.calls || math.Abs(got.p50-want.p50) > 1e-9 || math.Abs(got.p99-want.p99) > 1e-9 {
		t.Errorf("since() = %+v, want %+v", *got, want)
	}
	if _, err := after.since(after); err == nil {
		t.Error("since() of a drain without calls succeeded, want an error")
	}
}

func TestTheHighestFiniteBoundStandsForTheInfiniteBucket(t *testing.T) {
	h := webhookHistogram{0.1: 1, 1: 1, math.Inf(1): 10}
	if got := h.quantile(0.99); got != 1 {
		t.Errorf("quantile(0.99) = %v, want 1, the highest finite bound", got)
	}
}

func TestLabel(t *testing.T) {
	labels := `name="eviction-bridge.evictionrequest.coordination.k8s.io",operation="CREATE",rejected="false",type="validating",le="0.005"`
	if v, ok := label(labels, "le"); !ok || v != "0.005" {
		t.Errorf("label(le) = %q, %v", v, ok)
	}
	if _, ok := label(labels, "code"); ok {
		t.Error("label(code) found a label that is not there")
	}
}
