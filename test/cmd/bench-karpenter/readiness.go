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
	"fmt"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// readiness follows every version of the db Deployments of a namespace
// through an informer and keeps the fewest ready replicas each had.
type readiness struct {
	mu     sync.Mutex
	least  map[string]int32
	cancel context.CancelFunc
}

// watchReadiness starts following the db Deployments of ns and returns
// once its cache has synced: from then on no version is missed.
func watchReadiness(ctx context.Context, client kubernetes.Interface, ns string) (*readiness, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &readiness{least: map[string]int32{}, cancel: cancel}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	informer := factory.Apps().V1().Deployments().Informer()
	observe := func(obj any, deleted bool) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		dep, ok := obj.(*appsv1.Deployment)
		if !ok || !strings.HasPrefix(dep.Name, "db-") {
			return
		}
		ready := dep.Status.ReadyReplicas
		if deleted {
			// A db Deployment deleted meanwhile has nothing ready.
			ready = 0
		}
		r.observe(dep.Name, ready)
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(obj, false) },
		UpdateFunc: func(_, obj any) { observe(obj, false) },
		DeleteFunc: func(obj any) { observe(obj, true) },
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		cancel()
		return nil, fmt.Errorf("the Deployments of %s did not sync", ns)
	}
	return r, nil
}

func (r *readiness) observe(name string, ready int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if was, ok := r.least[name]; !ok || ready < was {
		r.least[name] = ready
	}
}

// fewest is the fewest ready replicas any db Deployment had, and how many
// of them were ever at zero.
func (r *readiness) fewest() (minReady int32, atZero int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	minReady = -1
	for _, n := range r.least {
		if minReady < 0 || n < minReady {
			minReady = n
		}
		if n == 0 {
			atZero++
		}
	}
	return minReady, atZero
}

func (r *readiness) stop() { r.cancel() }
