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

// Package storage wires the EvictionRequest strategies to etcd: REST serves
// the main resource, StatusREST the /status subresource.
package storage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/registry/coordination/evictionrequest"
)

// REST serves the evictionrequests resource.
type REST struct {
	*genericregistry.Store
}

var _ rest.ShortNamesProvider = &REST{}

// NewREST returns the storage of the main resource and of its status
// subresource, both backed by the same etcd store. The clock is the server's
// notion of now for the status rules.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, clock clock.PassiveClock) (*REST, *StatusREST, error) {
	strategy := evictionrequest.NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &coordination.EvictionRequest{} },
		NewListFunc:               func() runtime.Object { return &coordination.EvictionRequestList{} },
		DefaultQualifiedResource:  coordination.Resource("evictionrequests"),
		SingularQualifiedResource: coordination.Resource("evictionrequest"),

		CreateStrategy:      strategy,
		UpdateStrategy:      strategy,
		DeleteStrategy:      strategy,
		ResetFieldsStrategy: strategy,

		TableConvertor: evictionrequest.TableConvertor{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: evictionrequest.GetAttrs}); err != nil {
		return nil, nil, err
	}

	statusStrategy := evictionrequest.NewStatusStrategy(strategy, clock)
	statusStore := *store
	statusStore.UpdateStrategy = statusStrategy
	statusStore.ResetFieldsStrategy = statusStrategy
	return &REST{store}, &StatusREST{store: &statusStore}, nil
}

// ShortNames lets kubectl users type evr.
func (r *REST) ShortNames() []string {
	return []string{"evr"}
}

// StatusREST serves the status subresource of evictionrequests.
type StatusREST struct {
	store *genericregistry.Store
}

var _ rest.Patcher = &StatusREST{}

// New returns an empty EvictionRequest.
func (r *StatusREST) New() runtime.Object {
	return &coordination.EvictionRequest{}
}

// Destroy does nothing: the store is shared with REST, which owns it.
func (r *StatusREST) Destroy() {}

// Get returns the EvictionRequest, so that clients can patch its status.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	if err := checkGetOptions(options); err != nil {
		return nil, err
	}
	return r.store.Get(ctx, name, options)
}

// Update writes the status of an EvictionRequest; it never creates one.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields returns the fields /status ignores.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints the EvictionRequest.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// GetSingularName returns the singular resource name.
func (r *StatusREST) GetSingularName() string {
	return r.store.GetSingularName()
}
