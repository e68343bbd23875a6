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
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StripMetadataKeeping is a cache.TransformFunc that drops
// metadata.managedFields, labels and annotations but those named by keep,
// for caches of EvictionRequests whose readers read no other metadata:
// managedFields are about a third of a request, and its labels are those
// of its pod. Whoever builds such a cache states what its readers keep.
// Writing back a stripped copy loses nothing as long as the readers write
// only /status (which keeps the stored metadata whatever the write
// carries), patches or applies. Other values, such as the tombstones of
// deleted objects, pass unchanged.
func StripMetadataKeeping(keep ...string) func(obj any) (any, error) {
	return func(obj any) (any, error) {
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return obj, nil
		}
		accessor.SetManagedFields(nil)
		accessor.SetLabels(nil)
		var kept map[string]string
		for _, key := range keep {
			if value, ok := accessor.GetAnnotations()[key]; ok {
				if kept == nil {
					kept = map[string]string{}
				}
				kept[key] = value
			}
		}
		accessor.SetAnnotations(kept)
		return obj, nil
	}
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

// StripManagedFieldsBut is StripManagedFields that keeps the entries of the
// field managers named: for a reader that asks who else writes an object
// (stepaside, for kube-controller-manager's controllers), at the cost of
// those entries alone.
func StripManagedFieldsBut(managers ...string) func(obj any) (any, error) {
	return func(obj any) (any, error) {
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return obj, nil
		}
		var kept []metav1.ManagedFieldsEntry
		for _, e := range accessor.GetManagedFields() {
			if slices.Contains(managers, e.Manager) {
				kept = append(kept, e)
			}
		}
		accessor.SetManagedFields(kept)
		return obj, nil
	}
}
