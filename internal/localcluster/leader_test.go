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
	"slices"
	"testing"
)

// TestSoleLeaderIsTheOneReplicaThatReportsLeading: a replica thawed after
// its lease ran out still reports leading for up to its renew deadline,
// beside the replica that took the Lease over; a fault aimed at the leader
// must then wait, not hit the first of them.
func TestSoleLeaderIsTheOneReplicaThatReportsLeading(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leads []int
		want  int
	}{
		{"none: an election under way", nil, -1},
		{"the first", []int{0}, 0},
		{"the second", []int{1}, 1},
		{"two: one of them stale", []int{0, 1}, -1},
		{"the last of three", []int{2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := soleLeader(3, func(i int) bool { return slices.Contains(tc.leads, i) }); got != tc.want {
				t.Errorf("soleLeader with %v reporting: %d, want %d", tc.leads, got, tc.want)
			}
		})
	}
}
