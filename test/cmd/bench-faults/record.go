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
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/faults/history"
)

// lister lists and watches one kind of object for the recorder.
type lister struct {
	kind  string
	list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// recorder writes every version of every watched object to the record. It
// resumes each watch from the last resourceVersion it saw, so a restart of
// kube-apiserver or of our server loses nothing; when the version is gone
// (compacted, or older than a restarted kube-apiserver's watch cache), it
// lists again and records as a Gap each object written since it last saw
// it, and as a Gap then Deleted each object gone since. An object listed
// at the version last recorded lost nothing and is not recorded again.
type recorder struct {
	w  *history.Writer
	wg sync.WaitGroup
}

func (r *recorder) start(ctx context.Context, l lister) error {
	items, rv, err := listItems(ctx, l)
	if err != nil {
		return fmt.Errorf("listing %s: %w", l.kind, err)
	}
	seen := lastSeen{}
	for _, item := range items {
		if err := r.w.Object(l.kind, history.Added, item); err != nil {
			return err
		}
		seen.observe(history.Added, item)
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.follow(ctx, l, rv, seen)
	}()
	return nil
}

// lastSeen is the last version recorded of each object of a kind that is
// not deleted, by UID.
type lastSeen map[types.UID]metav1.Object

// observe notes what an event of eventType says of obj.
func (s lastSeen) observe(eventType string, obj runtime.Object) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if eventType == history.Deleted {
		delete(s, m.GetUID())
		return
	}
	s[m.GetUID()] = m
}

// relisted records what a list after a lost version says: each object
// written since it was last recorded as a Gap, each object gone since as a
// Gap (its last version) then Deleted. Nothing is known of when they
// changed, only that they did.
func (r *recorder) relisted(kind string, items []runtime.Object, seen lastSeen) {
	listed := map[types.UID]bool{}
	for _, item := range items {
		m, ok := item.(metav1.Object)
		if !ok {
			continue
		}
		listed[m.GetUID()] = true
		if last, ok := seen[m.GetUID()]; ok && last.GetResourceVersion() == m.GetResourceVersion() {
			continue
		}
		_ = r.w.Object(kind, history.Gap, item)
		seen.observe(history.Gap, item)
	}
	for uid, last := range seen {
		if !listed[uid] {
			_ = r.w.Object(kind, history.Gap, last)
			_ = r.w.Object(kind, history.Deleted, last)
			delete(seen, uid)
		}
	}
}

func (r *recorder) follow(ctx context.Context, l lister, rv string, seen lastSeen) {
	logger := klog.FromContext(ctx).WithValues("kind", l.kind)
	for ctx.Err() == nil {
		w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{
			WatchFuncWithContext: l.watch,
		})
		if err != nil {
			logger.Error(err, "Starting the watch")
			return
		}
		for event := range w.ResultChan() {
			if event.Type == watch.Error {
				break
			}
			if event.Type == watch.Bookmark {
				continue
			}
			if accessor, err := metaAccessor(event.Object); err == nil {
				rv = accessor
			}
			if err := r.w.Object(l.kind, string(event.Type), event.Object); err != nil {
				logger.Error(err, "Recording")
			}
			seen.observe(string(event.Type), event.Object)
		}
		w.Stop()
		if ctx.Err() != nil {
			return
		}
		// The version is gone: list again.
		items, listRV, err := listItems(ctx, l)
		if err != nil {
			logger.Error(err, "Listing again")
			continue
		}
		r.relisted(l.kind, items, seen)
		rv = listRV
	}
}

// listItems lists the objects of l and the list's resourceVersion.
func listItems(ctx context.Context, l lister) ([]runtime.Object, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	list, err := l.list(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, "", err
	}
	accessor, err := meta.ListAccessor(list)
	if err != nil {
		return nil, "", err
	}
	return items, accessor.GetResourceVersion(), nil
}

func metaAccessor(obj runtime.Object) (string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return "", errors.New("no metadata")
	}
	return m.GetResourceVersion(), nil
}
