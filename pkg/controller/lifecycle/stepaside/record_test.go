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

package stepaside

import (
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// recordWith is the record ConfigMap of namespace holding data.
func recordWith(namespace string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: RecordName, Namespace: namespace}, Data: data}
}

// A record's keys that are no counterpart's, and values that do not parse,
// decide nothing: they are ignored, whatever they hold.
func TestTheRecordIgnoresWhatDecidesNothing(t *testing.T) {
	decision := `{"object":"Eviction shop/pod-1-db-0","place":"Eviction status","written":"2026-11-28T12:00:00Z"}`
	client := fake.NewClientset(recordWith("evictionrequest-system", map[string]string{
		"kube-scheduler": decision, string(ImperativeEvictionResponder): "true", string(EvictionRequestController): decision}))
	r := &Record{ConfigMaps: client.CoreV1(), Namespace: "evictionrequest-system", CallTimeout: time.Second}
	loaded, err := r.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(loaded.Decisions)); !slices.Equal(got, []Counterpart{EvictionRequestController}) {
		t.Errorf("decisions %v, want %s's alone", got, EvictionRequestController)
	}
	if got := slices.Sorted(maps.Keys(loaded.Ignored)); !slices.Equal(got, []string{string(ImperativeEvictionResponder), "kube-scheduler"}) {
		t.Errorf("ignored %v, want the key of another controller and the value that does not parse", got)
	}
}

// The first decision recorded for a counterpart stands, and a record an
// admin wrote without data, which keeps both controllers aside, stays
// without data: a decision saved into it would let the other run.
func TestSavingKeepsWhatTheRecordHolds(t *testing.T) {
	first := Decision{Object: "Eviction shop/pod-1-db-0", Place: "Eviction status"}
	for _, tc := range []struct {
		name string
		data map[string]string
		want map[string]string
	}{
		{"a decision for the counterpart", map[string]string{string(ImperativeEvictionResponder): `{"object":"first"}`},
			map[string]string{string(ImperativeEvictionResponder): `{"object":"first"}`}},
		{"an admin's record without data", map[string]string{}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(recordWith("evictionrequest-system", tc.data))
			r := &Record{ConfigMaps: client.CoreV1(), Namespace: "evictionrequest-system", CallTimeout: time.Second}
			if err := r.Save(t.Context(), ImperativeEvictionResponder, first); err != nil {
				t.Fatal(err)
			}
			cm, err := client.CoreV1().ConfigMaps(r.Namespace).Get(t.Context(), RecordName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(cm.Data, tc.want) {
				t.Errorf("record holds %v, want %v", cm.Data, tc.want)
			}
		})
	}
}
