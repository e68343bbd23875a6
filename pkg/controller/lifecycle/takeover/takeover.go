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

// Package takeover gives a controller that writes by server-side apply the
// fields that other field managers hold on an object it writes: an earlier
// release of the same controller that applied under another name, or
// kube-controller-manager's controller of the same job before it handed
// its objects back. A server-side apply removes the list items and map
// keys its manager alone owned and leaves out; those another manager
// co-owns stay, so without the take-over a controller that drops an item
// (a responder's entry, a label) never sees it go, and writes again at
// every resync. It is how kubectl moves the fields of client-side apply to
// server-side apply (k8s.io/client-go/util/csaupgrade): one JSON patch of
// managedFields, guarded by the resourceVersion it was computed from.
package takeover

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/klog/v2"
)

// Object is an object of the API with its metadata.
type Object interface {
	metav1.Object
	runtime.Object
}

// subresources are where the controllers apply: the object and its status.
var subresources = []string{"", "status"}

// Needed is true when obj, as a cache keeping the entries of from holds
// it, has fields of one of from.
func Needed(obj metav1.Object, from []string) bool {
	return slices.ContainsFunc(obj.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return slices.Contains(from, e.Manager)
	})
}

// Patch returns the JSON patch of obj's managedFields (obj as read from
// kube-apiserver, every entry) that gives manager's applies the fields of
// from, on the object and on its status; nil when from holds none.
func Patch(obj Object, from []string, manager string) ([]byte, error) {
	moved, ok := obj.DeepCopyObject().(Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	// csaupgrade moves the fields of updates: an apply of another name is,
	// to the manager taking over, the same as an update of it.
	entries := moved.GetManagedFields()
	for i := range entries {
		if slices.Contains(from, entries[i].Manager) {
			entries[i].Operation = metav1.ManagedFieldsOperationUpdate
		}
	}
	moved.SetManagedFields(entries)
	for _, subresource := range subresources {
		if err := csaupgrade.UpgradeManagedFields(moved, sets.New(from...), manager, csaupgrade.Subresource(subresource)); err != nil {
			return nil, err
		}
	}
	if apiequality.Semantic.DeepEqual(obj.GetManagedFields(), moved.GetManagedFields()) {
		return nil, nil
	}
	return json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": moved.GetManagedFields()},
		// A replace rather than a test, so that a write in between is a
		// 409 conflict, retried, as csaupgrade's own patch does.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
	})
}

// Client reads an object whole and patches it, for one kind.
type Client struct {
	// Get reads the object.
	Get func(ctx context.Context) (Object, error)
	// Patch sends a JSON patch of the object.
	Patch func(ctx context.Context, patch []byte) error
}

// TakeOver gives manager the fields from hold on the object cached, read
// whole first (the cache keeps only some entries), when the cache shows
// any: before manager's next apply, which then removes what it leaves out.
func TakeOver(ctx context.Context, cached metav1.Object, from []string, manager string, client Client) error {
	if !Needed(cached, from) {
		return nil
	}
	obj, err := client.Get(ctx)
	if err != nil {
		return fmt.Errorf("reading %s to take over the fields of %v: %w", klog.KObj(cached), from, err)
	}
	patch, err := Patch(obj, from, manager)
	if err != nil || patch == nil {
		return err
	}
	if err := client.Patch(ctx, patch); err != nil {
		return fmt.Errorf("taking over the fields of %v on %s: %w", from, klog.KObj(cached), err)
	}
	klog.FromContext(ctx).V(2).Info("Took over the fields of earlier field managers", "object", klog.KObj(cached), "from", from, "manager", manager)
	return nil
}
