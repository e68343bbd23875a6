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

package surge

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
)

func TestScaleBackSettled(t *testing.T) {
	// A Deployment scaled back from 2 to 1 (generation 3), and its
	// ReplicaSet at each step of carrying that out.
	scaledBack := func(mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
		d := deployment(func(d *appsv1.Deployment) {
			d.Generation = 3
			d.Status.ObservedGeneration = 3
		})
		for _, m := range mutate {
			m(d)
		}
		return d
	}
	rs := func(spec, observed, replicas int32) *appsv1.ReplicaSet {
		r := replicaSet("web-1", spec)
		r.Generation = 5
		r.Status.ObservedGeneration = int64(observed)
		r.Status.Replicas = replicas
		return r
	}
	for _, tc := range []struct {
		name string
		dep  *appsv1.Deployment
		rs   *appsv1.ReplicaSet
		want bool
	}{
		{"the ReplicaSet is down to the Deployment's count", scaledBack(), rs(1, 5, 1), true},
		{"the Deployment controller has not seen the scale-back", scaledBack(func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 2 }), rs(1, 5, 1), false},
		{"the ReplicaSet does not ask for the Deployment's count yet", scaledBack(), rs(2, 4, 2), false},
		{"the ReplicaSet controller has not seen the new count", scaledBack(), rs(1, 4, 1), false},
		{"the ReplicaSet has not removed a pod yet", scaledBack(), rs(1, 5, 2), false},
		{"the ReplicaSet is short of pods", scaledBack(), rs(1, 5, 0), false},
		{"an unset replica count is one", scaledBack(func(d *appsv1.Deployment) { d.Spec.Replicas = nil }), rs(1, 5, 1), true},
		{"a Deployment scaled up meanwhile", scaledBack(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](2) }), rs(1, 5, 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scaleBackSettled(tc.dep, tc.rs); got != tc.want {
				t.Errorf("scaleBackSettled() = %v, want %v", got, tc.want)
			}
		})
	}
}
