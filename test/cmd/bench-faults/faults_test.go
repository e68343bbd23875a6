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
	for _, api := range apis {
		f, err := flavourOf(api)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range uint64(20) {
			for _, n := range []int{len(f.faults), len(f.faults) + 3} {
				kinds := schedule(rand.New(rand.NewPCG(seed, seed)), f.faults, n)
				if len(kinds) != n {
					t.Fatalf("%s, seed %d: %d faults scheduled, want %d", api, seed, len(kinds), n)
				}
				for _, kind := range f.faults {
					if !slices.Contains(kinds, kind) {
						t.Errorf("%s, seed %d, %d faults: no %s in %v", api, seed, n, kind, kinds)
					}
				}
			}
		}
	}
}

// TestEveryFaultOfEveryAPIIsInjectable checks that every kind a flavour
// schedules is one the injector knows.
func TestEveryFaultOfEveryAPIIsInjectable(t *testing.T) {
	in := &injector{}
	for _, api := range apis {
		f, _ := flavourOf(api)
		for _, kind := range f.faults {
			if _, ok := in.faults()[kind]; !ok {
				t.Errorf("%s schedules %q, which the injector does not know", api, kind)
			}
		}
	}
	if _, err := flavourOf("coordination.k8s.io"); err == nil {
		t.Error("an unknown API was accepted")
	}
}

// kindsOf is the kinds of fault of our API's flavour.
func kindsOf(t *testing.T) []string {
	t.Helper()
	f, err := flavourOf(apiCoordination)
	if err != nil {
		t.Fatal(err)
	}
	return f.faults
}

func TestScheduleIsTheSameForTheSameSeed(t *testing.T) {
	kinds := kindsOf(t)
	first := schedule(rand.New(rand.NewPCG(7, 7)), kinds, 9)
	again := schedule(rand.New(rand.NewPCG(7, 7)), kinds, 9)
	if !slices.Equal(first, again) {
		t.Errorf("seed 7 scheduled %v, then %v", first, again)
	}
	if other := schedule(rand.New(rand.NewPCG(8, 8)), kinds, 9); slices.Equal(first, other) {
		t.Errorf("seeds 7 and 8 scheduled the same %v", first)
	}
}

func TestScheduleOfFewerFaultsThanKinds(t *testing.T) {
	all := kindsOf(t)
	if kinds := schedule(rand.New(rand.NewPCG(1, 1)), all, 2); len(kinds) != 2 {
		t.Errorf("2 faults scheduled as %v", kinds)
	}
	if kinds := schedule(rand.New(rand.NewPCG(1, 1)), all, 0); len(kinds) != 0 {
		t.Errorf("no fault scheduled as %v", kinds)
	}
}
