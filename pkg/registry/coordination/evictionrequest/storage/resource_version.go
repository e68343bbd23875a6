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

package storage

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// checkResourceVersion answers a resourceVersion that is not one with a 400
// naming it; the storage layer would report it as an internal error.
func checkResourceVersion(resourceVersion string) error {
	if _, err := (storage.APIObjectVersioner{}).ParseResourceVersion(resourceVersion); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("resourceVersion %q is not a resource version of this server", resourceVersion))
	}
	return nil
}

func checkGetOptions(options *metav1.GetOptions) error {
	if options == nil {
		return nil
	}
	return checkResourceVersion(options.ResourceVersion)
}

func checkListOptions(options *metainternalversion.ListOptions) error {
	if options == nil {
		return nil
	}
	return checkResourceVersion(options.ResourceVersion)
}

// Create creates an EvictionRequest. A resourceVersion in the new object is
// a 422 naming it, where the storage would answer a 500; only POST comes
// here, so a server-side apply that creates keeps its own rules.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if er, ok := obj.(*coordination.EvictionRequest); ok && er.ResourceVersion != "" {
		return nil, apierrors.NewInvalid(coordination.Kind("EvictionRequest"), er.Name, field.ErrorList{
			field.Forbidden(field.NewPath("metadata", "resourceVersion"), "must not be set on creation"),
		})
	}
	return r.Store.Create(ctx, obj, createValidation, options)
}

// Get reads an EvictionRequest, refusing a malformed resourceVersion with a
// 400.
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	if err := checkGetOptions(options); err != nil {
		return nil, err
	}
	return r.Store.Get(ctx, name, options)
}

// List lists EvictionRequests, refusing a malformed resourceVersion with a
// 400.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	if err := checkListOptions(options); err != nil {
		return nil, err
	}
	return r.Store.List(ctx, options)
}

// Watch watches EvictionRequests, refusing a malformed resourceVersion with
// a 400.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if err := checkListOptions(options); err != nil {
		return nil, err
	}
	return r.Store.Watch(ctx, options)
}

// DeleteCollection deletes the EvictionRequests a list selects, refusing a
// malformed resourceVersion of that list with a 400.
func (r *REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	if err := checkListOptions(listOptions); err != nil {
		return nil, err
	}
	return r.Store.DeleteCollection(ctx, deleteValidation, options, listOptions)
}
