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

// Package controller holds what every controller of the project does the
// same way, as k/k's pkg/controller does for kube-controller-manager's:
// workers that sync the keys of a queue, and event handlers on informers
// shared with others, removed together.
package controller

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// SyncFunc brings the object key one step forward and says when to look
// at it again even if nothing changes; zero is never.
type SyncFunc func(ctx context.Context, key string) (time.Duration, error)

// Worker is a queue and how its keys are synced; Kind names the objects in
// logs.
type Worker struct {
	Queue workqueue.TypedRateLimitingInterface[string]
	Sync  SyncFunc
	Kind  string
}

// RunWorkers waits for synced, then syncs the keys of each worker's queue
// with workers goroutines per queue until ctx ends; it shuts the queues
// down and waits for the goroutines before it returns.
func RunWorkers(ctx context.Context, workers int, synced []cache.InformerSynced, ws ...Worker) {
	var wg sync.WaitGroup
	defer func() {
		for _, w := range ws {
			w.Queue.ShutDown()
		}
		wg.Wait()
	}()
	if !cache.WaitForNamedCacheSyncWithContext(ctx, synced...) {
		return
	}
	for _, w := range ws {
		for range workers {
			wg.Go(func() {
				wait.UntilWithContext(ctx, func(ctx context.Context) {
					for ProcessNext(ctx, w) {
					}
				}, time.Second)
			})
		}
	}
	<-ctx.Done()
}

// ProcessNext syncs the next key of w's queue: on success it is looked at
// again after the duration the sync asked for, on failure with backoff. It
// is false once the queue shuts down.
func ProcessNext(ctx context.Context, w Worker) bool {
	key, quit := w.Queue.Get()
	if quit {
		return false
	}
	defer w.Queue.Done(key)
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "kind", w.Kind, "key", key)
	requeueAfter, err := w.Sync(klog.NewContext(ctx, logger), key)
	switch {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		// Someone wrote or deleted the object since the cache saw it: the
		// next sync reads the newer state.
		logger.V(4).Info("Object changed while syncing, requeuing", "err", err)
		w.Queue.AddRateLimited(key)
	case err != nil:
		utilruntime.HandleErrorWithContext(ctx, err, "Sync failed, requeuing", "kind", w.Kind, "key", key)
		w.Queue.AddRateLimited(key)
	default:
		w.Queue.Forget(key)
		if requeueAfter > 0 {
			w.Queue.AddAfter(key, requeueAfter)
		}
	}
	return true
}
