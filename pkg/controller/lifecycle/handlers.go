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

package lifecycle

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/util/lifecycleindex"
)

func (c *Controller) addIndexers(evictions, requests cache.SharedIndexInformer) error {
	if err := lifecycleindex.AddEvictions(evictions); err != nil {
		return err
	}
	return lifecycleindex.AddRequests(requests)
}

// addHandlers wakes the queues (handlers that Run, or Close, removes, for
// informers that outlive the controller's term): an Eviction's status on any change of it,
// its requests, or its pod's deletion or end; a request on any change of it
// and on its Eviction's conditions; an Eviction's metadata when it is new,
// its labels or owners change, or its requests come and go.
func (c *Controller) addHandlers(ctx context.Context, evictions, requests, pods cache.SharedIndexInformer) error {
	logger := klog.FromContext(ctx)
	options := cache.HandlerOptions{Logger: &logger}
	if err := c.handlers.AddWithOptions(evictions, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			c.evictions.Add(objectKey(obj))
			c.metadata.Add(objectKey(obj))
		},
		UpdateFunc: c.updateEviction,
		DeleteFunc: func(obj any) {
			// A deleted Eviction that is still wanted is created again.
			if ev, ok := fromObject[*lifecyclev1alpha1.Eviction](obj); ok {
				c.enqueueRequestsOf(lifecycleutil.EvictionTargetKey(ev))
			}
		},
	}, options); err != nil {
		return err
	}
	if err := c.handlers.AddWithOptions(requests, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			c.requests.Add(objectKey(obj))
			if er, ok := fromObject[*lifecyclev1alpha1.EvictionRequest](obj); ok {
				c.enqueueEvictionsOf(lifecycleutil.RequestTargetKey(er), true)
			}
		},
		UpdateFunc: c.updateRequest,
		DeleteFunc: func(obj any) {
			if er, ok := fromObject[*lifecyclev1alpha1.EvictionRequest](obj); ok {
				c.enqueueEvictionsOf(lifecycleutil.RequestTargetKey(er), true)
			}
		},
	}, options); err != nil {
		return err
	}
	return c.handlers.AddWithOptions(pods, cache.ResourceEventHandlerFuncs{
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}, options)
}

func (c *Controller) updateEviction(oldObj, newObj any) {
	old, ok1 := oldObj.(*lifecyclev1alpha1.Eviction)
	ev, ok2 := newObj.(*lifecyclev1alpha1.Eviction)
	if !ok1 || !ok2 {
		return
	}
	c.evictions.Add(objectKey(ev))
	if !reflect.DeepEqual(old.Labels, ev.Labels) || !apiequality.Semantic.DeepEqual(old.OwnerReferences, ev.OwnerReferences) {
		c.metadata.Add(objectKey(ev))
	}
	for _, t := range []lifecyclev1alpha1.EvictionConditionType{lifecyclev1alpha1.EvictionConditionTargetEvicted, lifecyclev1alpha1.EvictionConditionFailed} {
		if !apiequality.Semantic.DeepEqual(lifecycleutil.Condition(old.Status.Conditions, t), lifecycleutil.Condition(ev.Status.Conditions, t)) {
			c.enqueueRequestsOf(lifecycleutil.EvictionTargetKey(ev))
			return
		}
	}
}

func (c *Controller) updateRequest(oldObj, newObj any) {
	old, ok1 := oldObj.(*lifecyclev1alpha1.EvictionRequest)
	er, ok2 := newObj.(*lifecyclev1alpha1.EvictionRequest)
	if !ok1 || !ok2 {
		return
	}
	c.requests.Add(objectKey(er))
	if old.Spec.Intent != er.Spec.Intent || (old.DeletionTimestamp == nil) != (er.DeletionTimestamp == nil) {
		c.enqueueEvictionsOf(lifecycleutil.RequestTargetKey(er), true)
	}
}

// updatePod wakes the Evictions of a pod whose deletion started or that
// reached a terminal phase.
func (c *Controller) updatePod(oldObj, newObj any) {
	old, ok1 := oldObj.(*corev1.Pod)
	pod, ok2 := newObj.(*corev1.Pod)
	if !ok1 || !ok2 {
		return
	}
	if !old.DeletionTimestamp.Equal(pod.DeletionTimestamp) || podutil.IsTerminal(pod) != podutil.IsTerminal(old) {
		c.enqueueEvictionsOf(lifecycleutil.TargetKey(pod.Namespace, pod.UID), false)
	}
}

// deletePod wakes the unfinished Evictions of a deleted pod after
// CompletionGrace: the active responder may report its completion
// meanwhile.
func (c *Controller) deletePod(obj any) {
	pod, ok := podutil.FromObject(obj)
	if !ok {
		return
	}
	for _, ev := range c.evictionsOf(lifecycleutil.TargetKey(pod.Namespace, pod.UID)) {
		if !lifecycleutil.IsFinished(ev) {
			c.evictions.AddAfter(objectKey(ev), CompletionGrace)
		}
	}
}

// enqueueEvictionsOf wakes the Evictions of a target; with metadata, their
// labels and owners too.
func (c *Controller) enqueueEvictionsOf(target string, metadata bool) {
	for _, ev := range c.evictionsOf(target) {
		c.evictions.Add(objectKey(ev))
		if metadata {
			c.metadata.Add(objectKey(ev))
		}
	}
}

func (c *Controller) enqueueRequestsOf(target string) {
	for _, er := range c.requestsOf(target) {
		c.requests.Add(objectKey(er))
	}
}

// evictionsOf lists the Evictions of a target from the cache.
func (c *Controller) evictionsOf(target string) []*lifecyclev1alpha1.Eviction {
	return lifecycleindex.ByKey[*lifecyclev1alpha1.Eviction](c.evictionIndexer, target)
}

// requestsOf lists the EvictionRequests of a target from the cache.
func (c *Controller) requestsOf(target string) []*lifecyclev1alpha1.EvictionRequest {
	return lifecycleindex.ByKey[*lifecyclev1alpha1.EvictionRequest](c.requestIndexer, target)
}

func objectKey(obj any) string {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
	}
	return key
}

// fromObject unwraps an object of a delete event, which may be a tombstone.
func fromObject[T any](obj any) (T, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	t, ok := obj.(T)
	return t, ok
}
