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

package framework

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// follow calls observe with every version of the objects lw lists and
// watches, from the list on, until the test ends: a RetryWatcher resumes
// a watch that ends from the last version seen, so no version goes
// unseen. The returned function reports a watch that failed.
func follow(t testing.TB, lw *cache.ListWatch, observe func(watch.EventType, runtime.Object)) func() error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	list, err := lw.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	for _, item := range items {
		observe(watch.Added, item)
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, listMeta.GetResourceVersion(), lw)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu sync.Mutex
	var failed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for event := range w.ResultChan() {
			if event.Type == watch.Error {
				mu.Lock()
				failed = fmt.Errorf("the watch failed: %v", event.Object)
				mu.Unlock()
				return
			}
			observe(event.Type, event.Object)
		}
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		return failed
	}
}
