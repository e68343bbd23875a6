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
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
)

// Handlers are the event handlers a controller registered on informers it
// shares with others (a process's caches outlive every leadership term:
// evictionrequest-apiserver's, and evictionrequest-controller's with the
// eviction API bridge): RemoveAll removes them together when the
// controller stops, so that the next term starts clean.
type Handlers struct {
	mu   sync.Mutex
	regs []registration
}

type registration struct {
	informer cache.SharedIndexInformer
	handle   cache.ResourceEventHandlerRegistration
}

// Add registers handler on informer.
func (h *Handlers) Add(informer cache.SharedIndexInformer, handler cache.ResourceEventHandler) error {
	return h.AddWithOptions(informer, handler, cache.HandlerOptions{})
}

// AddWithOptions registers handler on informer with options (the logger of
// its calls, a resync period).
func (h *Handlers) AddWithOptions(informer cache.SharedIndexInformer, handler cache.ResourceEventHandler, options cache.HandlerOptions) error {
	handle, err := informer.AddEventHandlerWithOptions(handler, options)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.regs = append(h.regs, registration{informer, handle})
	return nil
}

// RemoveAll removes every handler Add registered.
func (h *Handlers) RemoveAll(ctx context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.regs {
		if err := r.informer.RemoveEventHandler(r.handle); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Removing an event handler")
		}
	}
	h.regs = nil
}

// OnEveryChange is a handler that calls f with the object of every add,
// update and delete (a tombstone on a missed delete).
func OnEveryChange(f func(obj any)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    f,
		UpdateFunc: func(_, obj any) { f(obj) },
		DeleteFunc: f,
	}
}
