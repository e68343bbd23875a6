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

// Package ttlaftercomplete deletes the EvictionRequests of
// coordination.k8s.io that completed longer ago than a time to live, as
// kube-controller-manager's ttlafterfinished controller deletes finished
// Jobs: a completed request keeps nothing going, and without it the
// requests of every pod ever evicted would fill the server's memory and
// its etcd. The time to live counts from the Complete condition's
// lastTransitionTime, which evictionrequest-apiserver's status strategy
// stamps with its own clock when the condition turns True: no writer can
// date a completion to have its request deleted early.
package ttlaftercomplete

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller"
	"github.com/evictionrequest/apiserver/pkg/controller/ttlaftercomplete/metrics"
	clientset "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/typed/coordination/v1alpha1"
	informers "github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions/coordination/v1alpha1"
	listers "github.com/evictionrequest/apiserver/pkg/generated/listers/coordination/v1alpha1"
)

// ControllerName names the controller: its logger, its descriptor.
const ControllerName = "evictionrequest-ttl-after-complete"

// DefaultTTL is how long a completed request stays by default: long enough
// to see how it ended (kubectl evictionrequest status), as kube-apiserver
// keeps events for an hour.
const DefaultTTL = time.Hour

// Controller deletes the requests that completed more than its TTL ago.
type Controller struct {
	client      clientset.EvictionRequestsGetter
	lister      listers.EvictionRequestLister
	synced      cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[string]
	handlers    controller.Handlers
	ttl         time.Duration
	clock       clock.Clock
	callTimeout time.Duration
}

// New returns the controller of the requests of informer, which it deletes
// through client ttl after they complete, each call bounded by callTimeout.
func New(ctx context.Context, client clientset.EvictionRequestsGetter, informer informers.EvictionRequestInformer,
	ttl time.Duration, clk clock.WithTicker, callTimeout time.Duration) (*Controller, error) {
	c := &Controller{
		client: client, lister: informer.Lister(), synced: informer.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: ControllerName, Clock: clk}),
		ttl: ttl, clock: clk, callTimeout: callTimeout,
	}
	err := c.handlers.Add(informer.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	if err != nil {
		return nil, err
	}
	metrics.Register()
	klog.FromContext(ctx).V(2).Info("Deleting completed EvictionRequests after their time to live", "ttl", ttl)
	return c, nil
}

// enqueue queues a request that completed; the others wait for the update
// that completes them.
func (c *Controller) enqueue(obj any) {
	er, ok := obj.(*v1alpha1.EvictionRequest)
	if !ok || !coordinationutil.IsComplete(er) {
		return
	}
	if key, err := cache.MetaNamespaceKeyFunc(er); err == nil {
		c.queue.Add(key)
	}
}

// Run deletes expired requests with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.handlers.RemoveAll(ctx)
	controller.RunWorkers(ctx, workers, []cache.InformerSynced{c.synced},
		controller.Worker{Queue: c.queue, Sync: c.sync, Kind: "EvictionRequest"})
}

// sync deletes the request of key once its time to live has passed, and
// says to look again when it will have.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	er, err := c.lister.EvictionRequests(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	completed, ok := coordinationutil.CompletionTime(er)
	if !ok {
		return 0, nil
	}
	if left := completed.Add(c.ttl).Sub(c.clock.Now()); left > 0 {
		return left, nil
	}
	// As ttlafterfinished does: only the version the cache saw, so that a
	// request that changed since is looked at again.
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	err = c.client.EvictionRequests(namespace).Delete(callCtx, name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: ptr.To(er.UID), ResourceVersion: ptr.To(er.ResourceVersion)},
	})
	if err != nil {
		return 0, fmt.Errorf("deleting EvictionRequest %s, complete since %s: %w", key, completed.UTC().Format(time.RFC3339), err)
	}
	metrics.Deleted.Inc()
	klog.FromContext(ctx).V(2).Info("Deleted a completed EvictionRequest after its time to live", "evictionRequest", klog.KObj(er),
		"completed", completed, "ttl", c.ttl, "reason", coordinationutil.CompletionReason(er))
	return 0, nil
}
