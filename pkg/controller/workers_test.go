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

package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
)

// A sync that succeeds forgets the key's failures and looks again when it
// asked to; one that fails is retried with backoff; a conflict or a
// NotFound is retried, as the cache will show the newer object.
func TestProcessNext(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	for name, tc := range map[string]struct {
		requeueAfter time.Duration
		err          error
		retries      int
	}{
		"done":             {},
		"look again later": {requeueAfter: time.Hour},
		"failed":           {err: errors.New("boom"), retries: 1},
		"conflict":         {err: apierrors.NewConflict(schema.GroupResource{Resource: "evictions"}, "e", errors.New("changed")), retries: 1},
		"gone since":       {err: apierrors.NewNotFound(schema.GroupResource{Resource: "evictions"}, "e"), retries: 1},
	} {
		t.Run(name, func(t *testing.T) {
			queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
			defer queue.ShutDown()
			queue.Add("ns/e")
			var synced string
			w := Worker{Queue: queue, Kind: "Eviction", Sync: func(_ context.Context, key string) (time.Duration, error) {
				synced = key
				return tc.requeueAfter, tc.err
			}}
			if !ProcessNext(ctx, w) || synced != "ns/e" {
				t.Fatalf("ProcessNext synced %q", synced)
			}
			if got := queue.NumRequeues("ns/e"); got != tc.retries {
				t.Errorf("%d retries with backoff, want %d", got, tc.retries)
			}
		})
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	queue.ShutDown()
	if ProcessNext(ctx, Worker{Queue: queue}) {
		t.Error("ProcessNext went on after the queue shut down")
	}
}

// RunWorkers returns once ctx ends, its queues shut down.
func TestRunWorkersShutsTheQueuesDown(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	synced := make(chan string, 1)
	queue.Add("ns/e")
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunWorkers(ctx, 2, nil, Worker{Queue: queue, Kind: "Eviction", Sync: func(_ context.Context, key string) (time.Duration, error) {
			synced <- key
			return 0, nil
		}})
	}()
	if key := <-synced; key != "ns/e" {
		t.Errorf("synced %q", key)
	}
	cancel()
	<-done
	if !queue.ShuttingDown() {
		t.Error("the queue still runs after RunWorkers returned")
	}
}
