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
	"math/rand/v2"
	"slices"
	"testing"
)

func TestScheduleHasEveryKindWhenTheCountAllows(t *testing.T) {
	for seed := range uint64(20) {
		for _, n := range []int{len(faultKinds), len(faultKinds) + 3} {
			kinds := schedule(rand.New(rand.NewPCG(seed, seed)), n)
			if len(kinds) != n {
				t.Fatalf("seed %d: %d faults scheduled, want %d", seed, len(kinds), n)
			}
			for _, kind := range faultKinds {
				if !slices.Contains(kinds, kind) {
					t.Errorf("seed %d, %d faults: no %s in %v", seed, n, kind, kinds)
				}
			}
		}
	}
}

func TestScheduleIsTheSameForTheSameSeed(t *testing.T) {
	first := schedule(rand.New(rand.NewPCG(7, 7)), 9)
	again := schedule(rand.New(rand.NewPCG(7, 7)), 9)
	if !slices.Equal(first, again) {
		t.Errorf("seed 7 scheduled %v, then %v", first, again)
	}
	if other := schedule(rand.New(rand.NewPCG(8, 8)), 9); slices.Equal(first, other) {
		t.Errorf("seeds 7 and 8 scheduled the same %v", first)
	}
}

func TestScheduleOfFewerFaultsThanKinds(t *testing.T) {
	if kinds := schedule(rand.New(rand.NewPCG(1, 1)), 2); len(kinds) != 2 {
		t.Errorf("2 faults scheduled as %v", kinds)
	}
	if kinds := schedule(rand.New(rand.NewPCG(1, 1)), 0); len(kinds) != 0 {
		t.Errorf("no fault scheduled as %v", kinds)
	}
}
