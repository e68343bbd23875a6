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

// Package evictionrequest holds the registry strategies of EvictionRequest:
// what the server does to an object on create, update and status update
// before it is validated and stored.
package evictionrequest

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
)

// resetFieldsVersion is the key of the reset fields: server-side apply looks
// them up by the full group version of the request, coordination.k8s.io/v1alpha1.
var resetFieldsVersion = fieldpath.APIVersion(v1alpha1.SchemeGroupVersion.String())

// Strategy implements the create, update and delete behaviour of the main
// EvictionRequest resource.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of the main resource.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator}
}

// NamespaceScoped is true: an EvictionRequest lives beside its pod.
func (Strategy) NamespaceScoped() bool {
	return true
}

// GetResetFields returns the fields the main resource ignores: the status,
// which only the /status subresource writes.
func (Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		resetFieldsVersion: fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate clears the status a client sent and starts the request
// with the default cancellation policy, Allow.
func (Strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	er := obj.(*coordination.EvictionRequest)
	er.Status = coordination.EvictionRequestStatus{
		EvictionRequestCancellationPolicy: ptr.To(coordination.Allow),
	}
	er.Generation = 1
}

// PrepareForUpdate keeps the stored status and bumps the generation when the
// spec changed.
func (Strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	newER := obj.(*coordination.EvictionRequest)
	oldER := old.(*coordination.EvictionRequest)
	newER.Status = oldER.Status
	if !apiequality.Semantic.DeepEqual(newER.Spec, oldER.Spec) {
		newER.Generation = oldER.Generation + 1
	}
}

// Validate validates a new EvictionRequest.
func (Strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateEvictionRequest(obj.(*coordination.EvictionRequest))
}

// WarningsOnCreate returns no warnings.
func (Strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string {
	return nil
}

// Canonicalize does nothing: the stored form is the one validated.
func (Strategy) Canonicalize(obj runtime.Object) {}

// AllowCreateOnUpdate is false: requests are created with POST or apply.
func (Strategy) AllowCreateOnUpdate(ctx context.Context) bool {
	return false
}

// AllowUnconditionalUpdate is false: several requesters, interceptors and the
// controller write the same object, so every update must name the
// resourceVersion it read.
func (Strategy) AllowUnconditionalUpdate(ctx context.Context) bool {
	return false
}

// ValidateUpdate validates an update of the main resource.
func (Strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateEvictionRequestUpdate(obj.(*coordination.EvictionRequest), old.(*coordination.EvictionRequest))
}

// WarningsOnUpdate returns no warnings.
func (Strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// StatusStrategy implements updates of the /status subresource: the status
// changes, the spec is kept.
type StatusStrategy struct {
	Strategy
	clock clock.PassiveClock
}

// NewStatusStrategy returns the strategy of the /status subresource. The
// clock is the server's notion of now for the heartbeat and deadline rules
// and for the transition times of conditions.
func NewStatusStrategy(strategy Strategy, clock clock.PassiveClock) StatusStrategy {
	return StatusStrategy{Strategy: strategy, clock: clock}
}

// GetResetFields returns the fields /status ignores: the spec and the
// metadata PrepareForUpdate keeps, so that a server-side apply to /status
// records no ownership of what it did not write.
func (StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		resetFieldsVersion: fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
			fieldpath.MakePathOrDie("metadata", "finalizers"),
			fieldpath.MakePathOrDie("metadata", "ownerReferences"),
		),
	}
}

// PrepareForUpdate keeps the stored spec and metadata, as the status
// subresources of built-in types and CRDs do: whoever may write /status may
// not relabel a request or hold its deletion with a finalizer. Only the
// managed fields of the write are kept, since they record who owns the
// status. A status without a cancellation policy keeps the stored one: the
// field is defaulted, so leaving it out must not be read as a wish to drop a
// Forbid. The conditions' transition times are the server's
// (stampTransitionTimes).
func (s StatusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	newER := obj.(*coordination.EvictionRequest)
	oldER := old.(*coordination.EvictionRequest)
	managedFields := newER.ManagedFields
	oldER.ObjectMeta.DeepCopyInto(&newER.ObjectMeta)
	newER.ManagedFields = managedFields
	newER.Spec = oldER.Spec
	if newER.Status.EvictionRequestCancellationPolicy == nil {
		newER.Status.EvictionRequestCancellationPolicy = oldER.Status.EvictionRequestCancellationPolicy
	}
	stampTransitionTimes(newER.Status.Conditions, oldER.Status.Conditions, metav1.NewTime(s.clock.Now()).Rfc3339Copy())
}

// stampTransitionTimes sets the lastTransitionTime of each condition to
// when the server saw its status change: the stored time while the status
// is unchanged, now when it changed or the condition is new. The writer's
// time is ignored: the time Complete turned True is when the TTL of a
// completed request starts, and a writer must not choose when a request is
// deleted by dating its completion.
func stampTransitionTimes(conditions, old []metav1.Condition, now metav1.Time) {
	for i := range conditions {
		c := &conditions[i]
		if prev := apimeta.FindStatusCondition(old, c.Type); prev != nil && prev.Status == c.Status && !prev.LastTransitionTime.IsZero() {
			c.LastTransitionTime = prev.LastTransitionTime
			continue
		}
		c.LastTransitionTime = now
	}
}

// ValidateUpdate validates the new status and its move from the old one.
func (s StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateEvictionRequestStatusUpdate(obj.(*coordination.EvictionRequest), old.(*coordination.EvictionRequest), s.clock.Now())
}

// WarningsOnUpdate returns no warnings.
func (StatusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}
