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
	"strings"
	"sync"
	"testing"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
)

// WritesOfOurControllers watches the Evictions and EvictionRequests of ns
// from now until the function it returns is called, which returns each
// write of evictionrequest-controller's own controllers it saw, as
// "resource/name by field manager" (and a watch that ended early): an
// entry of theirs that is new, or newer, in a version of the object. Every
// version is seen, not only the last: a field manager's entry goes once
// another manager takes all its fields over.
func (f *Framework) WritesOfOurControllers(t testing.TB, ns string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var (
		mu     sync.Mutex
		writes []string
		wg     sync.WaitGroup
	)
	for _, resource := range []string{"evictions", "evictionrequests"} {
		client := f.Dynamic.Resource(lifecyclev1alpha1.SchemeGroupVersion.WithResource(resource)).Namespace(ns)
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		// The entries each object has now: only writes after them count.
		seen := map[string]time.Time{}
		for i := range list.Items {
			recordEntries(seen, &list.Items[i])
		}
		w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		wg.Go(func() {
			defer w.Stop()
			for e := range w.ResultChan() {
				o, ok := e.Object.(metav1.Object)
				if !ok {
					continue
				}
				for _, manager := range recordEntries(seen, o) {
					mu.Lock()
					writes = append(writes, fmt.Sprintf("%s/%s by %s", resource, o.GetName(), manager))
					mu.Unlock()
				}
			}
			if ctx.Err() == nil {
				// A watch kube-apiserver ended saw nothing after: the
				// check must not pass for want of looking.
				mu.Lock()
				writes = append(writes, fmt.Sprintf("the watch of %s ended before the check, unseen writes may follow", resource))
				mu.Unlock()
			}
		})
	}
	return func() []string {
		cancel()
		wg.Wait()
		return writes
	}
}

// recordEntries records in seen the time of each entry of our controllers
// in o's managedFields, and returns the managers whose entry is new or
// newer.
func recordEntries(seen map[string]time.Time, o metav1.Object) []string {
	var written []string
	for _, e := range o.GetManagedFields() {
		if (e.Manager != lifecycle.FieldManager && e.Manager != evictor.FieldManager) || e.Time == nil {
			continue
		}
		key := strings.Join([]string{o.GetName(), e.Manager, string(e.Operation), e.Subresource}, "/")
		if last, ok := seen[key]; !ok || e.Time.After(last) {
			seen[key] = e.Time.Time
			written = append(written, e.Manager)
		}
	}
	return written
}
