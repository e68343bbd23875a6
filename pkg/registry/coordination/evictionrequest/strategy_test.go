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

package evictionrequest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

const podUID = "0f4d7d0e-7c61-4d4b-a1a4-2d8b7a3c9e55"

func newEvictionRequest() *coordination.EvictionRequest {
	return &coordination.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Name: podUID, Namespace: "default", ResourceVersion: "7", Generation: 3},
		Spec: coordination.EvictionRequestSpec{
			Type:                     coordination.Soft,
			Target:                   coordination.EvictionTarget{PodRef: &coordination.LocalPodReference{Name: "web-0", UID: podUID}},
			Requesters:               []coordination.Requester{{Name: "nodemaintenance.k8s.io"}},
			Interceptors:             []coordination.Interceptor{{Name: "a.example.com"}, {Name: "b.example.com"}},
			HeartbeatDeadlineSeconds: ptr.To[int32](1800),
		},
		Status: coordination.EvictionRequestStatus{
			EvictionRequestCancellationPolicy: ptr.To(coordination.Forbid),
			ActiveInterceptorName:             ptr.To("b.example.com"),
			Message:                           "b is migrating data",
			PodEvictionStatus:                 &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 2},
		},
	}
}

func TestPrepareForCreateClearsStatusAndDefaultsPolicy(t *testing.T) {
	er := newEvictionRequest()
	NewStrategy(runtime.NewScheme()).PrepareForCreate(context.Background(), er)

	want := coordination.EvictionRequestStatus{EvictionRequestCancellationPolicy: ptr.To(coordination.Allow)}
	if diff := cmp.Diff(want, er.Status); diff != "" {
		t.Errorf("status after create (-want +got):\n%s", diff)
	}
	if er.Generation != 1 {
		t.Errorf("generation = %d, want 1", er.Generation)
	}
}

func TestPrepareForUpdateKeepsStatusAndBumpsGenerationOnSpecChange(t *testing.T) {
	cases := map[string]struct {
		mutate         func(er *coordination.EvictionRequest)
		wantGeneration int64
	}{
		"spec change bumps the generation": {
			mutate: func(er *coordination.EvictionRequest) {
				er.Spec.Requesters = append(er.Spec.Requesters, coordination.Requester{Name: "descheduler.example.com"})
			},
			wantGeneration: 4,
		},
		"metadata change keeps the generation": {
			mutate:         func(er *coordination.EvictionRequest) { er.Labels = map[string]string{"app": "web"} },
			wantGeneration: 3,
		},
		"status change is ignored": {
			mutate: func(er *coordination.EvictionRequest) {
				er.Status.ActiveInterceptorName = ptr.To("a.example.com")
				er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Allow)
			},
			wantGeneration: 3,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oldER := newEvictionRequest()
			newER := oldER.DeepCopy()
			tc.mutate(newER)
			NewStrategy(runtime.NewScheme()).PrepareForUpdate(context.Background(), newER, oldER)
			if diff := cmp.Diff(oldER.Status, newER.Status); diff != "" {
				t.Errorf("the main resource changed the status (-stored +new):\n%s", diff)
			}
			if newER.Generation != tc.wantGeneration {
				t.Errorf("generation = %d, want %d", newER.Generation, tc.wantGeneration)
			}
		})
	}
}

func TestStatusPrepareForUpdateKeepsSpec(t *testing.T) {
	strategy := NewStatusStrategy(NewStrategy(runtime.NewScheme()), testingclock.NewFakePassiveClock(time.Now()))
	oldER := newEvictionRequest()
	newER := oldER.DeepCopy()
	newER.Spec.Requesters = nil
	newER.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](600)
	newER.Status.Message = "b finished"
	newER.Status.ActiveInterceptorCompleted = true

	strategy.PrepareForUpdate(context.Background(), newER, oldER)

	if diff := cmp.Diff(oldER.Spec, newER.Spec); diff != "" {
		t.Errorf("/status changed the spec (-stored +new):\n%s", diff)
	}
	if newER.Status.Message != "b finished" || !newER.Status.ActiveInterceptorCompleted {
		t.Errorf("/status dropped the status change: %+v", newER.Status)
	}
	if newER.Generation != oldER.Generation {
		t.Errorf("/status changed the generation from %d to %d", oldER.Generation, newER.Generation)
	}
}

func TestStatusPrepareForUpdateKeepsMetadataButTheWritersManagedFields(t *testing.T) {
	strategy := NewStatusStrategy(NewStrategy(runtime.NewScheme()), testingclock.NewFakePassiveClock(time.Now()))
	old := newEvictionRequest()
	old.Labels = map[string]string{"app": "web"}
	old.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "requester"}}
	obj := old.DeepCopy()
	obj.Labels = map[string]string{"app": "relabeled"}
	obj.Annotations = map[string]string{"added": "through /status"}
	obj.Finalizers = []string{"example.com/hold"}
	obj.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u"}}
	obj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "requester"}, {Manager: "interceptor", Subresource: "status"}}
	obj.Status.Message = "written"

	strategy.PrepareForUpdate(context.Background(), obj, old)

	wantMeta := old.ObjectMeta.DeepCopy()
	wantMeta.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "requester"}, {Manager: "interceptor", Subresource: "status"}}
	if diff := cmp.Diff(*wantMeta, obj.ObjectMeta); diff != "" {
		t.Errorf("/status changed the metadata (-want +got):\n%s", diff)
	}
	if obj.Status.Message != "written" {
		t.Errorf("/status lost the status it wrote")
	}
}

func TestStatusPrepareForUpdateKeepsUnsetCancellationPolicy(t *testing.T) {
	strategy := NewStatusStrategy(NewStrategy(runtime.NewScheme()), testingclock.NewFakePassiveClock(time.Now()))
	oldER := newEvictionRequest()
	newER := oldER.DeepCopy()
	newER.Status.EvictionRequestCancellationPolicy = nil

	strategy.PrepareForUpdate(context.Background(), newER, oldER)

	if got := newER.Status.EvictionRequestCancellationPolicy; got == nil || *got != coordination.Forbid {
		t.Errorf("cancellation policy = %v, want the stored Forbid", got)
	}
}

// A condition's lastTransitionTime is when the server saw its status
// change, whatever the writer sent: a Complete dated 2020 is stored with the
// server's now, so that the TTL of a completed request counts from a time
// the server recorded; while a status stays, its time stays.
func TestStatusPrepareForUpdateStampsTransitionTimesWithTheServersClock(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	stored := metav1.NewTime(now.Add(-time.Hour))
	year2020 := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	strategy := NewStatusStrategy(NewStrategy(runtime.NewScheme()), testingclock.NewFakePassiveClock(now))
	oldER := newEvictionRequest()
	oldER.Status.Conditions = []metav1.Condition{
		{Type: "Migrating", Status: metav1.ConditionTrue, Reason: "Copying", LastTransitionTime: stored},
		{Type: "Warm", Status: metav1.ConditionFalse, Reason: "Cold", LastTransitionTime: stored},
		{Type: "StoredUndated", Status: metav1.ConditionTrue, Reason: "NoTime"},
	}
	newER := oldER.DeepCopy()
	newER.Status.Conditions = []metav1.Condition{
		// Unchanged status, redated by the writer.
		{Type: "Migrating", Status: metav1.ConditionTrue, Reason: "StillCopying", LastTransitionTime: year2020},
		// Changed status, dated by the writer.
		{Type: "Warm", Status: metav1.ConditionTrue, Reason: "Warmed", LastTransitionTime: year2020},
		// New, dated by the writer, and new without a date.
		{Type: string(coordination.EvictionRequestComplete), Status: metav1.ConditionTrue, Reason: "PodDeleted", LastTransitionTime: year2020},
		{Type: "Undated", Status: metav1.ConditionTrue, Reason: "NoTime"},
		// Unchanged, stored without a time: dated now.
		{Type: "StoredUndated", Status: metav1.ConditionTrue, Reason: "NoTime", LastTransitionTime: year2020},
	}

	strategy.PrepareForUpdate(context.Background(), newER, oldER)

	want := map[string]metav1.Time{"Migrating": stored, "Warm": metav1.NewTime(now), "Complete": metav1.NewTime(now), "Undated": metav1.NewTime(now),
		"StoredUndated": metav1.NewTime(now)}
	for _, c := range newER.Status.Conditions {
		if !c.LastTransitionTime.Equal(ptr.To(want[c.Type])) {
			t.Errorf("condition %s: lastTransitionTime %s, want %s", c.Type, c.LastTransitionTime.UTC(), want[c.Type].UTC())
		}
	}
	if errs := strategy.ValidateUpdate(context.Background(), newER, oldER); len(errs) != 0 {
		t.Errorf("the stamped status does not validate: %v", errs)
	}
}

func TestStatusValidateUpdateUsesTheStrategyClock(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	strategy := NewStatusStrategy(NewStrategy(runtime.NewScheme()), testingclock.NewFakePassiveClock(now))
	oldER := newEvictionRequest()
	newER := oldER.DeepCopy()

	newER.Status.HeartbeatTime = &metav1.Time{Time: now.Add(5 * time.Second)}
	if errs := strategy.ValidateUpdate(context.Background(), newER, oldER); len(errs) != 0 {
		t.Errorf("a heartbeat 5s ahead of the server clock was refused: %v", errs)
	}
	newER.Status.HeartbeatTime = &metav1.Time{Time: now.Add(time.Minute)}
	if errs := strategy.ValidateUpdate(context.Background(), newER, oldER); len(errs) != 1 || errs[0].Field != "status.heartbeatTime" {
		t.Errorf("a heartbeat a minute ahead of the server clock: got %v, want one error on status.heartbeatTime", errs)
	}
}

func TestResetFields(t *testing.T) {
	strategy := NewStrategy(runtime.NewScheme())
	cases := map[string]struct {
		got  map[fieldpath.APIVersion]*fieldpath.Set
		want *fieldpath.Set
	}{
		"main resource resets status": {
			got:  strategy.GetResetFields(),
			want: fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
		},
		"status subresource resets spec and the metadata it keeps": {
			got: NewStatusStrategy(strategy, testingclock.NewFakePassiveClock(time.Now())).GetResetFields(),
			want: fieldpath.NewSet(fieldpath.MakePathOrDie("spec"),
				fieldpath.MakePathOrDie("metadata", "labels"), fieldpath.MakePathOrDie("metadata", "annotations"),
				fieldpath.MakePathOrDie("metadata", "finalizers"), fieldpath.MakePathOrDie("metadata", "ownerReferences")),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if len(tc.got) != 1 {
				t.Fatalf("reset fields have %d versions, want exactly coordination.k8s.io/v1alpha1: %v", len(tc.got), tc.got)
			}
			set, ok := tc.got["coordination.k8s.io/v1alpha1"]
			if !ok {
				t.Fatalf("no reset fields under coordination.k8s.io/v1alpha1: %v", tc.got)
			}
			if !set.Equals(tc.want) {
				t.Errorf("reset fields = %v, want %v", set, tc.want)
			}
		})
	}
}

func TestSelectableFields(t *testing.T) {
	er := newEvictionRequest()
	want := map[string]string{
		"metadata.name":                podUID,
		"metadata.namespace":           "default",
		"spec.target.podRef.name":      "web-0",
		"spec.target.podRef.uid":       podUID,
		"status.activeInterceptorName": "b.example.com",
	}
	if diff := cmp.Diff(want, map[string]string(SelectableFields(er))); diff != "" {
		t.Errorf("selectable fields (-want +got):\n%s", diff)
	}
	er.Status.ActiveInterceptorName = nil
	if got := SelectableFields(er)["status.activeInterceptorName"]; got != "" {
		t.Errorf("an unset active interceptor selects as %q, want the empty string", got)
	}
}

func TestTableConvertor(t *testing.T) {
	er := newEvictionRequest()
	er.CreationTimestamp = metav1.NewTime(time.Now().Add(-5 * time.Hour))
	er.Spec.Requesters = []coordination.Requester{{Name: "r1.example.com"}, {Name: "r2.example.com"}, {Name: "r3.example.com"}, {Name: "r4.example.com"}}
	er.Status.Conditions = []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: "PodDeleted"}}

	table, err := TableConvertor{}.ConvertToTable(context.Background(), &coordination.EvictionRequestList{Items: []coordination.EvictionRequest{*er}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			names = append(names, c.Name)
		}
	}
	if diff := cmp.Diff([]string{"Name", "Pod", "Requesters", "Active Interceptor", "Complete", "Failed Evictions", "Age"}, names); diff != "" {
		t.Errorf("default columns (-want +got):\n%s", diff)
	}
	want := []interface{}{podUID, "web-0", "r1.example.com,r2.example.com,r3.example.com + 1 more", "b.example.com", "True", int64(2), "5h",
		"b.example.com,a.example.com", "Forbid", "<none>", "b is migrating data"}
	if diff := cmp.Diff(want, table.Rows[0].Cells); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}

	noHeaders, err := TableConvertor{}.ConvertToTable(context.Background(), er, &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(noHeaders.ColumnDefinitions) != 0 || len(noHeaders.Rows) != 1 {
		t.Errorf("NoHeaders table has %d columns and %d rows, want 0 and 1", len(noHeaders.ColumnDefinitions), len(noHeaders.Rows))
	}
}
