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

package scrapegauges

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

func TestBoundedKeepsTheLargestCountsAndSumsTheRest(t *testing.T) {
	small := map[string]int{"a": 1, "b": 2}
	if diff := cmp.Diff(small, Bounded(small, 3)); diff != "" {
		t.Errorf("counts within the bound changed (-want +got):\n%s", diff)
	}
	counts := map[string]int{}
	for i := 0; i < 10; i++ {
		counts[fmt.Sprintf("name-%d", i)] = i + 1
	}
	want := map[string]int{"name-9": 10, "name-8": 9, OtherLabelValue: 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8}
	if diff := cmp.Diff(want, Bounded(counts, 3)); diff != "" {
		t.Errorf("Bounded() (-want +got):\n%s", diff)
	}
}

func TestCollectorReportsAGaugeWithoutALabelUnderNoLabel(t *testing.T) {
	byName := metrics.NewDesc("test_by_name", "Counts by name.", []string{"name"}, nil, metrics.ALPHA, "")
	oldest := metrics.NewDesc("test_oldest_timestamp_seconds", "Oldest.", nil, nil, metrics.ALPHA, "")
	c := NewCollector(byName, oldest)
	registry := metrics.NewKubeRegistry()
	registry.CustomMustRegister(c)
	c.SetSource(func() []map[string]int {
		return []map[string]int{{"a": 2}, Timestamp(time.Unix(1700000000, 0))}
	})
	want := `
# HELP test_by_name [ALPHA] Counts by name.
# TYPE test_by_name gauge
test_by_name{name="a"} 2
# HELP test_oldest_timestamp_seconds [ALPHA] Oldest.
# TYPE test_oldest_timestamp_seconds gauge
test_oldest_timestamp_seconds 1.7e+09
`
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want), "test_by_name", "test_oldest_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	// A zero time reports no sample rather than the epoch.
	c.SetSource(func() []map[string]int { return []map[string]int{nil, Timestamp(time.Time{})} })
	if err := testutil.GatherAndCompare(registry, strings.NewReader(""), "test_oldest_timestamp_seconds"); err != nil {
		t.Error(err)
	}
}
