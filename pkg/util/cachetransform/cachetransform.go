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

// StripManagedFields is a cache.TransformFunc that drops
// metadata.managedFields, which no reader of the server's caches uses and
// which are a large part of every object's metadata. An update written back
// from a stripped copy leaves the stored managedFields as they are: the API
// server keeps them when a write omits them. Other values, such as the
// tombstones of deleted objects, pass unchanged.
func StripManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}
