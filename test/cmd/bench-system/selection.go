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

package main

import (
	"context"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// selectionWatch records, from a watch as an interceptor would hold one,
// when each of our requests first showed its active interceptor.
type selectionWatch struct {
	mu       sync.Mutex
	selected map[string]time.Time
	stop     context.CancelFunc
	done     chan struct{}
}

// watchSelections starts a selectionWatch on the benchmark's namespace; nil
// for the CRD, which selects nothing.
func (b *bench) watchSelections(ctx context.Context, t target) (*selectionWatch, error) {
	if !t.ours {
		return nil, nil
	}
	// A watch outlives any request time-out; it ends with the phase.
	config := rest.CopyConfig(b.admin)
	config.Timeout = 0
	requests, err := b.newRequests(t, config, b.o.oursContent)
	if err != nil {
		return nil, err
	}
	// As an interceptor watches: only the requests it is active for.
	mine := fields.OneTermEqualSelector(v1alpha1.ActiveInterceptorNameField, interceptorName).String()
	_, resourceVersion, err := requests.list(ctx, metav1.ListOptions{FieldSelector: mine, Limit: 1})
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	// Under full load the server may close a watcher that falls behind;
	// the retry watcher resumes where it was, as informers do.
	w, err := watchtools.NewRetryWatcherWithContext(ctx, resourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.FieldSelector, options.TimeoutSeconds = mine, ptr.To[int64](3600)
			return requests.watch(ctx, options)
		},
	})
	if err != nil {
		stop()
		return nil, err
	}
	s := &selectionWatch{selected: map[string]time.Time{}, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer w.Stop()
		for event := range w.ResultChan() {
			now := time.Now()
			name, active, err := activeInterceptor(event.Object)
			if err != nil || active != interceptorName {
				continue
			}
			s.mu.Lock()
			if _, seen := s.selected[name]; !seen {
				s.selected[name] = now
			}
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// p99 stops the watch and returns the p99 of the time from each create's
// response (created, by name) to its selection; false when a request was
// never seen selected.
func (s *selectionWatch) p99(created map[string]time.Time) (time.Duration, bool) {
	s.stop()
	<-s.done
	latencies := make([]time.Duration, 0, len(created))
	for name, at := range created {
		selected, ok := s.selected[name]
		if !ok {
			return 0, false
		}
		latencies = append(latencies, max(selected.Sub(at), 0))
	}
	slices.Sort(latencies)
	return latencies[len(latencies)*99/100], true
}
