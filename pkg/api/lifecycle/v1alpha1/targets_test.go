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

package v1alpha1

import (
	"testing"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCompareEvictionNames(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"pod-9-web", "pod-10-web", -1},
		{"pod-10-web", "pod-9-web", 1},
		{"pod-1-web", "pod-1-web", 0},
		{"pod-2-api", "pod-10-web", 1}, // other pods: as strings
		{"a-client-eviction", "pod-1-web", -1},
	} {
		if got := CompareEvictionNames(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareEvictionNames(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// The Eviction that counts does not depend on the order the Evictions are
// listed in, even when their timestamps are equal.
func TestRelevantEvictionBreaksTiesTheSameWayInAnyOrder(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	eviction := func(name string, conditions ...metav1.Condition) *lifecyclev1alpha1.Eviction {
		return &lifecyclev1alpha1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at},
			Status: lifecyclev1alpha1.EvictionStatus{Conditions: conditions}}
	}
	failedAt := func(reason lifecyclev1alpha1.EvictionConditionReason) metav1.Condition {
		return metav1.Condition{Type: string(lifecyclev1alpha1.EvictionConditionFailed), Status: metav1.ConditionTrue, Reason: string(reason), LastTransitionTime: at}
	}
	started := eviction("pod-12-web")
	started.Status.TargetResponders = []lifecyclev1alpha1.TargetResponder{{Name: Evictor, State: lifecyclev1alpha1.ResponderStateActive}}
	for name, tc := range map[string]struct {
		evictions []*lifecyclev1alpha1.Eviction
		want      string
	}{
		"active, the lowest counter":         {[]*lifecyclev1alpha1.Eviction{eviction("pod-10-web"), eviction("pod-9-web"), eviction("pod-11-web")}, "pod-9-web"},
		"active, the one that started first": {[]*lifecyclev1alpha1.Eviction{eviction("pod-10-web"), started}, "pod-12-web"},
		"failed, the highest counter": {[]*lifecyclev1alpha1.Eviction{
			eviction("pod-2-web", failedAt(lifecyclev1alpha1.EvictionConditionReasonNoFurtherResponder)),
			eviction("pod-3-web", failedAt(lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters)),
		}, "pod-3-web"},
	} {
		t.Run(name, func(t *testing.T) {
			for i := range tc.evictions {
				// Every rotation of the list.
				rotated := append(append([]*lifecyclev1alpha1.Eviction(nil), tc.evictions[i:]...), tc.evictions[:i]...)
				if got, _ := RelevantEviction(rotated); got == nil || got.Name != tc.want {
					t.Errorf("RelevantEviction(rotation %d) = %v, want %s", i, got, tc.want)
				}
			}
		})
	}
}
