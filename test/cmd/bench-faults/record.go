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
// (compacted), it lists again and records each object as a Gap.
type recorder struct {
	w  *history.Writer
	wg sync.WaitGroup
}

func (r *recorder) start(ctx context.Context, l lister) error {
	items, rv, err := listItems(ctx, l)
	if err != nil {
		return fmt.Errorf("listing %s: %w", l.kind, err)
	}
	for _, item := range items {
		if err := r.w.Object(l.kind, history.Added, item); err != nil {
			return err
		}
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.follow(ctx, l, rv)
	}()
	return nil
}

func (r *recorder) follow(ctx context.Context, l lister, rv string) {
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
		}
		w.Stop()
		if ctx.Err() != nil {
			return
		}
		// The version is gone: list again, every object a Gap.
		items, listRV, err := listItems(ctx, l)
		if err != nil {
			logger.Error(err, "Listing again")
			continue
		}
		for _, item := range items {
			_ = r.w.Object(l.kind, history.Gap, item)
		}
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
