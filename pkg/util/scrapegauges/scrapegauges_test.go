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
	"testing"

	"github.com/google/go-cmp/cmp"
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
