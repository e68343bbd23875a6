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

package takeover

import (
	"maps"
	"slices"
	"testing"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	earlier = "evictionrequest-controller"
	ours    = "evictionrequest.github.io/evictionrequest-controller"
)

// A label applied by an earlier field manager and by ours stays when ours
// applies without it, for the earlier one still owns it; once ours took
// the earlier one's fields over, ours removes it by leaving it out, and
// the earlier manager is gone from managedFields. Without a take-over the
// label would never go.
func TestTakingOverLetsAnApplyRemoveWhatItLeavesOut(t *testing.T) {
	for _, tc := range []struct {
		name     string
		takeOver bool
		want     []string
	}{
		{"taken over", true, []string{"stays"}},
		{"not taken over", false, []string{"goes", "stays"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			client := fake.NewClientset()
			evictions := client.LifecycleV1alpha1().Evictions("shop")
			apply := func(manager string, labels ...string) {
				t.Helper()
				set := map[string]string{}
				for _, l := range labels {
					set[l] = "requester"
				}
				if _, err := evictions.Apply(ctx, lifecycleapply.Eviction("pod-1-db-0", "shop").WithLabels(set), metav1.ApplyOptions{FieldManager: manager, Force: true}); err != nil {
					t.Fatal(err)
				}
			}
			apply(earlier, "stays", "goes")
			apply(ours, "stays", "goes")
			if tc.takeOver {
				cached, err := evictions.Get(ctx, "pod-1-db-0", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := TakeOver(ctx, cached, []string{earlier}, ours, Eviction(client.LifecycleV1alpha1(), "shop", "pod-1-db-0", ours, time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			apply(ours, "stays")
			ev, err := evictions.Get(ctx, "pod-1-db-0", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(ev.Labels)); !slices.Equal(got, tc.want) {
				t.Errorf("labels %v, want %v", got, tc.want)
			}
			if Needed(ev, []string{earlier}) == tc.takeOver {
				t.Errorf("the earlier manager holds fields: %v, want %v", Needed(ev, []string{earlier}), !tc.takeOver)
			}
		})
	}
}

// An object without fields of the earlier managers needs no patch, and
// gets none.
func TestNothingToTakeOver(t *testing.T) {
	ev := &lifecyclev1alpha1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "pod-1-db-0", ResourceVersion: "7",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: ours, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "lifecycle.k8s.io/v1alpha1",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:stays":{}}}}`)}}}}
	patch, err := Patch(ev, []string{earlier}, ours)
	if err != nil || patch != nil {
		t.Errorf("patch %s (%v), want none", patch, err)
	}
}
