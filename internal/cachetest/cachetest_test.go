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

package cachetest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// dropLabels stands for a binary's transform.
func dropLabels(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.Labels = nil
	}
	return obj, nil
}

func labelled(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{"app": "web"}}}
}

// What a test puts in a cache by hand is what the binary's transform
// leaves, and the test's own object is left as it was.
func TestCacheStoresWhatTheTransformLeaves(t *testing.T) {
	informer := KubeInformers(fake.NewClientset(), dropLabels).Core().V1().Pods()
	indexer, err := Cache(informer.Informer(), dropLabels)
	if err != nil {
		t.Fatal(err)
	}
	pod := labelled("web-0")
	if err := indexer.Add(pod); err != nil {
		t.Fatal(err)
	}
	updated := labelled("web-0")
	updated.Spec.NodeName = "node-1"
	if err := indexer.Update(updated); err != nil {
		t.Fatal(err)
	}
	cached, err := informer.Lister().Pods("shop").Get("web-0")
	if err != nil {
		t.Fatal(err)
	}
	if cached.Labels != nil || cached.Spec.NodeName != "node-1" {
		t.Errorf("cached %+v, want the update without its labels", cached.ObjectMeta)
	}
	if pod.Labels == nil || updated.Labels == nil {
		t.Error("the test's own objects lost their labels")
	}
	replaced := labelled("web-1")
	if err := indexer.Replace([]any{replaced}, "2"); err != nil {
		t.Fatal(err)
	}
	if cached, err := informer.Lister().Pods("shop").Get("web-1"); err != nil || cached.Labels != nil {
		t.Errorf("cached %v (%v) after a Replace, want it without its labels", cached, err)
	}
	if replaced.Labels == nil {
		t.Error("the test's own object lost its labels in a Replace")
	}
}

// An informer started after Cache caches what it lists through the same
// transform.
func TestCacheTransformsWhatTheInformerLists(t *testing.T) {
	factory := KubeInformers(fake.NewClientset(labelled("web-1")), Whole)
	pods := factory.Core().V1().Pods()
	if _, err := Cache(pods.Informer(), dropLabels); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(t.Context().Done(), pods.Informer().HasSynced) {
		t.Fatal("the cache did not sync")
	}
	cached, err := pods.Lister().Pods("shop").Get("web-1")
	if err != nil || cached.Labels != nil {
		t.Errorf("cached %v, %v; want the pod without its labels", cached, err)
	}
}
