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

// Package lifecycleindex indexes the informers of lifecycle.k8s.io/v1alpha1
// Evictions and EvictionRequests by the pod they target, so that the
// objects of one pod are found by key: the controller, the default
// evictor and the drains share one index on a shared informer.
package lifecycleindex

import (
	"fmt"
	"slices"
	"strings"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

// Target is the name of the index: lifecycleutil.TargetKey.
const Target = "lifecycle.k8s.io/target"

// AddEvictions indexes an Eviction informer by target, unless it is
// already; the informer must not have started.
func AddEvictions(informer cache.SharedIndexInformer) error {
	return add(informer, func(obj any) []string {
		if ev, ok := obj.(*lifecyclev1alpha1.Eviction); ok {
			return keys(lifecycleutil.EvictionTargetKey(ev))
		}
		return nil
	})
}

// AddRequests indexes an EvictionRequest informer by target, unless it is
// already; the informer must not have started.
func AddRequests(informer cache.SharedIndexInformer) error {
	return add(informer, func(obj any) []string {
		if er, ok := obj.(*lifecyclev1alpha1.EvictionRequest); ok {
			return keys(lifecycleutil.RequestTargetKey(er))
		}
		return nil
	})
}

func add(informer cache.SharedIndexInformer, index func(obj any) []string) error {
	if _, ok := informer.GetIndexer().GetIndexers()[Target]; ok {
		return nil
	}
	if err := informer.AddIndexers(cache.Indexers{Target: func(obj any) ([]string, error) { return index(obj), nil }}); err != nil {
		return fmt.Errorf("indexing by target: %w", err)
	}
	return nil
}

func keys(key string) []string {
	if key == "" {
		return nil
	}
	return []string{key}
}

// Evictions lists the Evictions of the pod uid in namespace from an
// indexed informer's indexer.
func Evictions(indexer cache.Indexer, namespace string, uid types.UID) []*lifecyclev1alpha1.Eviction {
	return ByKey[*lifecyclev1alpha1.Eviction](indexer, lifecycleutil.TargetKey(namespace, uid))
}

// Requests lists the EvictionRequests of the pod uid in namespace from an
// indexed informer's indexer.
func Requests(indexer cache.Indexer, namespace string, uid types.UID) []*lifecyclev1alpha1.EvictionRequest {
	return ByKey[*lifecyclev1alpha1.EvictionRequest](indexer, lifecycleutil.TargetKey(namespace, uid))
}

// ByKey lists the objects of type T under a target key, by name: the
// index's own order is a map's, and the controllers write what they derive
// from the list in its order.
func ByKey[T metav1.Object](indexer cache.Indexer, key string) []T {
	if key == "" {
		return nil
	}
	objs, err := indexer.ByIndex(Target, key)
	if err != nil {
		utilruntime.HandleError(err)
		return nil
	}
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		if t, ok := obj.(T); ok {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}
