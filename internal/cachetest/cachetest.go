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

// Package cachetest is the one way the unit tests fill informer caches:
// every entry takes the transform the binary installs on that cache, so a
// reader under test sees what it sees in production. A reader that reads a
// field its binary's cache drops then fails its own tests, without a list
// of fields anyone keeps by hand. golangci-lint (forbidigo, in
// .golangci.yaml) refuses informer factories and hand-filled caches in
// tests outside this package.
package cachetest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
)

// Whole is the transform of a cache its binary keeps whole (the SDK's,
// which users' programs build): naming it is a statement the test makes,
// where a missing transform would be an oversight.
func Whole(obj any) (any, error) {
	return obj, nil
}

// KubeInformers is an informer factory of client whose informers cache
// what transform leaves of each object, as a binary's factory built with
// informers.WithTransform(transform) does.
func KubeInformers(client kubernetes.Interface, transform cache.TransformFunc) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(transform))
}

// EvictionRequestInformers is KubeInformers for the EvictionRequest API's
// clientset.
func EvictionRequestInformers(client versioned.Interface, transform cache.TransformFunc) externalversions.SharedInformerFactory {
	return externalversions.NewSharedInformerFactoryWithOptions(client, 0, externalversions.WithTransform(transform))
}

// Cache is the cache of informer for a test to fill by hand, standing for
// the informer's list and watch: what it is given is stored as transform
// leaves it (a copy: the test's object is not changed). informer caches
// what it lists and watches the same way, should the test start it.
func Cache(informer cache.SharedIndexInformer, transform cache.TransformFunc) (cache.Indexer, error) {
	if err := informer.SetTransform(transform); err != nil {
		return nil, err
	}
	return transformed{Indexer: informer.GetIndexer(), transform: transform}, nil
}

// transformed is an Indexer that stores objects as transform leaves them.
type transformed struct {
	cache.Indexer
	transform cache.TransformFunc
}

func (c transformed) Add(obj any) error {
	kept, err := c.apply(obj)
	if err != nil {
		return err
	}
	return c.Indexer.Add(kept)
}

func (c transformed) Update(obj any) error {
	kept, err := c.apply(obj)
	if err != nil {
		return err
	}
	return c.Indexer.Update(kept)
}

func (c transformed) Replace(objs []any, resourceVersion string) error {
	kept := make([]any, 0, len(objs))
	for _, obj := range objs {
		k, err := c.apply(obj)
		if err != nil {
			return err
		}
		kept = append(kept, k)
	}
	return c.Indexer.Replace(kept, resourceVersion)
}

// apply transforms a copy of obj: transforms change what they are given,
// and the test keeps using its object.
func (c transformed) apply(obj any) (any, error) {
	if o, ok := obj.(runtime.Object); ok {
		obj = o.DeepCopyObject()
	}
	return c.transform(obj)
}

// KeepsDeclaredPodAnnotations checks a binary's pod transform against what
// its readers declare they read (readers: each reader's name and its
// PodAnnotationsRead): every declared annotation is kept, and an
// annotation no reader declares is dropped.
func KeepsDeclaredPodAnnotations(t testing.TB, transform cache.TransformFunc, readers map[string][]string) {
	t.Helper()
	const undeclared = "kubectl.kubernetes.io/last-applied-configuration"
	annotations := map[string]string{undeclared: "{}"}
	for _, read := range readers {
		for _, key := range read {
			annotations[key] = "x"
		}
	}
	got, err := transform(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Annotations: annotations}})
	if err != nil {
		t.Fatal(err)
	}
	kept := got.(*corev1.Pod).Annotations
	for reader, read := range readers {
		for _, key := range read {
			if _, ok := kept[key]; !ok {
				t.Errorf("the pod cache drops %s, which %s reads", key, reader)
			}
		}
	}
	if _, ok := kept[undeclared]; ok {
		t.Errorf("the pod cache keeps an annotation no reader reads: %v", kept)
	}
}
