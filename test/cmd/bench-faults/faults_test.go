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

// A command drain is run again only when kube-apiserver itself could not
// be reached; what kube-apiserver answered, a webhook's failure among it,
// ends the drain.
func TestUnreachableIsKubeAPIServerOnly(t *testing.T) {
	const server = "https://127.0.0.1:40043"
	for _, tc := range []struct {
		name, out string
		want      bool
	}{
		{"refused, as kubectl drain printed it in a campaign", `error when evicting pods/"budgeted-5897bcb74-5lqjg" -n "faults": Post "https://127.0.0.1:40043/api/v1/namespaces/faults/pods/budgeted-5897bcb74-5lqjg/eviction": dial tcp 127.0.0.1:40043: connect: connection refused`, true},
		{"reset", `Get "https://127.0.0.1:40043/api/v1/nodes/kwok-node-3": read tcp 127.0.0.1:51234->127.0.0.1:40043: read: connection reset by peer`, true},
		{"cut short", `Get "https://127.0.0.1:40043/api/v1/pods?fieldSelector=spec.nodeName%3Dkwok-node-3": EOF`, true},
		{"a webhook's failure, answered by kube-apiserver", `error when evicting pods/"db-0" -n "faults": Internal error occurred: failed calling webhook "eviction-bridge.evictionrequest.github.io": Post "https://localhost:40077/evict?timeout=10s": dial tcp 127.0.0.1:40077: connect: connection refused`, false},
		{"another server's address", `Post "https://127.0.0.1:40044/api/v1/namespaces/faults/pods/x/eviction": dial tcp 127.0.0.1:40044: connect: connection refused`, false},
		{"a refusal", `error when evicting pods/"db-0" -n "faults": pods "db-0" is forbidden: User "e2e" cannot create resource "pods/eviction"`, false},
		{"the drain's own time-out", `error: timed out waiting for the condition`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unreachable(tc.out, server); got != tc.want {
				t.Errorf("unreachable(%q) = %v, want %v", tc.out, got, tc.want)
			}
		})
	}
}
