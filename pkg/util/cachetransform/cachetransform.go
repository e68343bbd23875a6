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

// Package cachetransform holds the transforms the server's informers apply
// to what they cache.
package cachetransform

import (
	"k8s.io/apimachinery/pkg/api/meta"
)

// StripMetadata is a cache.TransformFunc that drops metadata.managedFields,
// labels and annotations, which the controller never reads from its cache
// of EvictionRequests: managedFields are about a third of a request, and
// its labels are those of its pod. The controller writes only /status,
// which keeps the stored metadata whatever the write carries, so nothing
// is lost by writing back a stripped copy. Other values, such as the
// tombstones of deleted objects, pass unchanged.
func StripMetadata(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil {
		accessor.SetManagedFields(nil)
		accessor.SetLabels(nil)
		accessor.SetAnnotations(nil)
	}
	return obj, nil
}

// StripManagedFields is a cache.TransformFunc that drops
// metadata.managedFields, for controllers that write only by server-side
// apply (which never sends a cached copy back) and never read who manages
// what: evictionrequest-controller's informers. Other values pass
// unchanged.
func StripManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}
