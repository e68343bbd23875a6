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

package promtext

import (
	"math"
	"testing"
)

const exposition = `# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="bridge",operation="CREATE",le="0.005"} 3
apiserver_admission_webhook_admission_duration_seconds_bucket{name="bridge",operation="CREATE",le="+Inf"} 4
apiserver_admission_webhook_admission_duration_seconds_bucket{name="other",operation="CREATE",le="0.005"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="other",operation="CREATE",le="+Inf"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="bridge",operation="UPDATE",le="0.005"} 1
apiserver_admission_webhook_admission_duration_seconds_bucket{name="bridge",operation="UPDATE",le="+Inf"} 1
go_memstats_heap_inuse_bytes 1.2345e+07
`

func TestHistogramSumsTheMatchingSeries(t *testing.T) {
	h, err := Samples(exposition).Histogram("apiserver_admission_webhook_admission_duration_seconds", func(labels string) bool {
		name, _ := Label(labels, "name")
		return name == "bridge"
	})
	if err != nil {
		t.Fatal(err)
	}
	if h[0.005] != 4 || h.Count() != 5 {
		t.Errorf("Histogram() = %v, want 4 under 5 ms and 5 in all (the two series of bridge)", h)
	}
}

func TestValue(t *testing.T) {
	if v, ok := Samples(exposition).Value("go_memstats_heap_inuse_bytes"); !ok || v != 12345000 {
		t.Errorf("Value() = %v, %v, want 12345000", v, ok)
	}
	if _, ok := Samples(exposition).Value("go_memstats_heap_inuse"); ok {
		t.Error("Value() found a sample by a prefix of its name")
	}
}

func TestQuantileOfWhatWasCountedSince(t *testing.T) {
	before := Histogram{0.001: 5, 0.005: 5, 0.01: 5, math.Inf(1): 5}
	after := Histogram{0.001: 15, 0.005: 95, 0.01: 105, math.Inf(1): 105}
	delta := after.Since(before)
	// 100 calls: 10 under 1 ms, 80 between 1 and 5 ms, 10 between 5 and 10 ms.
	if delta.Count() != 100 {
		t.Errorf("Count() = %v, want 100", delta.Count())
	}
	if got := delta.Quantile(0.5); math.Abs(got-0.003) > 1e-9 {
		t.Errorf("Quantile(0.5) = %v, want 0.003", got)
	}
	if got := delta.Quantile(0.99); math.Abs(got-0.0095) > 1e-9 {
		t.Errorf("Quantile(0.99) = %v, want 0.0095", got)
	}
}

func TestTheHighestFiniteBoundStandsForTheInfiniteBucket(t *testing.T) {
	h := Histogram{0.1: 1, 1: 1, math.Inf(1): 10}
	if got := h.Quantile(0.99); got != 1 {
		t.Errorf("Quantile(0.99) = %v, want 1, the highest finite bound", got)
	}
}

func TestLabel(t *testing.T) {
	labels := `name="eviction-bridge.evictionrequest.coordination.k8s.io",operation="CREATE",rejected="false",type="validating",le="0.005"`
	if v, ok := Label(labels, "le"); !ok || v != "0.005" {
		t.Errorf("Label(le) = %q, %v", v, ok)
	}
	if _, ok := Label(labels, "code"); ok {
		t.Error("Label(code) found a label that is not there")
	}
}
