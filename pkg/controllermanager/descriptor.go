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

// Package controllermanager runs the project's controllers the way
// kube-controller-manager runs its own: a descriptor per controller, built
// for each leadership term from a controller context whose informers are the
// term's, and run only while the process holds the component's Lease.
// evictionrequest-apiserver (from a post-start hook), evictionrequest-controller
// and surge-interceptor all run their controllers through it.
package controllermanager

import (
	"context"

	"k8s.io/client-go/informers"
)

// Controller is a controller built for one term. Run runs it until ctx ends;
// an error ends the whole term, which the manager then gives up and
// campaigns for again.
type Controller interface {
	Run(ctx context.Context) error
}

// RunFunc is a Controller of one function.
type RunFunc func(ctx context.Context) error

// Run calls f.
func (f RunFunc) Run(ctx context.Context) error { return f(ctx) }

// Closer is a Controller that holds something beyond its term's informers,
// such as event handlers on informers the whole process shares: Close
// releases it when the controller will not run because a controller built
// after it failed. A controller releases it itself when its Run returns.
type Closer interface {
	Close(ctx context.Context)
}

// InitFunc builds one controller of a term from the term's context. It
// registers the informers it reads on the context's factories, which start
// once every controller of the term is built.
type InitFunc func(ctx context.Context, cc *Context) (Controller, error)

// Descriptor describes one controller, as kube-controller-manager's
// ControllerDescriptor: its name (its logger's name), whether the
// configuration runs it, and how to build it.
type Descriptor struct {
	Name    string
	Enabled bool
	// Informers, when set, registers on a factory the informers the
	// controller reads, with their indexes, before the factory starts: the
	// manager calls it on each term's own factory before Init, and a
	// process that shares its factory with the manager calls
	// Manager.RegisterInformers before it starts the factory. It must be
	// idempotent.
	Informers func(informers.SharedInformerFactory) error
	Init      InitFunc
}

// workerController is a controller of kube-controller-manager's shape:
// Run(ctx, workers) runs workers goroutines until ctx ends.
type workerController interface {
	Run(ctx context.Context, workers int)
}

// WithWorkers is the Controller that runs c with workers goroutines. It
// closes c when c is a Closer.
func WithWorkers(c workerController, workers int) Controller {
	return withWorkers{c: c, workers: workers}
}

type withWorkers struct {
	c       workerController
	workers int
}

func (w withWorkers) Run(ctx context.Context) error {
	w.c.Run(ctx, w.workers)
	return nil
}

func (w withWorkers) Close(ctx context.Context) {
	if closer, ok := w.c.(Closer); ok {
		closer.Close(ctx)
	}
}
