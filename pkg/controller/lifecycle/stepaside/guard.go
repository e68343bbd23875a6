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

// Package stepaside keeps the project's controllers of lifecycle.k8s.io out
// of the way of kube-controller-manager's. From Kubernetes 1.38 on,
// kube-controller-manager runs its own evictionrequest-controller and
// imperative-eviction-responder-controller when its EvictionRequestAPI gate
// is on (kind's and kubeadm's featureGates turn it on in every component).
// Two controllers of the same objects rewrite each other's status in a loop,
// so the Guard watches who writes the Evictions and EvictionRequests (the
// field managers of their managedFields, which differ between the two) and,
// at the first write of kube-controller-manager's it sees, stops this
// process's two controllers for good: the actors (the node drain, the
// eviction API bridge) go on, on kube-controller-manager's controllers.
package stepaside

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

// UpstreamManagers are the field managers of kube-controller-manager's two
// controllers (its controller names), which it applies the status of
// Evictions and EvictionRequests with.
var UpstreamManagers = []string{"evictionrequest-controller", "imperative-eviction-responder-controller"}

// EventStepAside is the reason of the event the Guard records on the object
// kube-controller-manager wrote when it steps aside.
const EventStepAside = "ControllerSteppedAside"

// Guard says when another controller acts on the objects of this
// process's controllers.
type Guard struct {
	clock    clock.PassiveClock
	recorder record.EventRecorder
	// since is when this process's controllers started: only a write of
	// kube-controller-manager's since then says it runs now. Earlier ones
	// are those of a kube-controller-manager that handed its objects over
	// to this process (an admin turned its controllers off), or of an
	// earlier version of this project, which used the same field manager.
	since time.Time

	once    sync.Once
	stepped chan struct{}
	// onStep, when set, is called once when the guard steps aside (the
	// metric).
	onStep func()
}

// New returns a guard started now, which records its event with recorder
// and calls onStep (may be nil) when it steps aside.
func New(clk clock.PassiveClock, recorder record.EventRecorder, onStep func()) *Guard {
	return &Guard{clock: clk, recorder: recorder, since: clk.Now(), stepped: make(chan struct{}), onStep: onStep}
}

// SteppedAside is closed once the guard saw another controller act.
func (g *Guard) SteppedAside() <-chan struct{} {
	return g.stepped
}

// Observe steps aside when obj carries a recent write of
// kube-controller-manager's controllers.
func (g *Guard) Observe(ctx context.Context, obj any) {
	o, ok := obj.(interface {
		metav1.Object
		runtime.Object
	})
	if !ok {
		return
	}
	manager, at, ok := g.upstreamWrite(o.GetManagedFields())
	if !ok {
		return
	}
	g.once.Do(func() {
		klog.FromContext(ctx).Info("Another controller acts on lifecycle.k8s.io: this process's evictionrequest-controller and imperative-eviction-responder-controller step aside, "+
			"its node drain and eviction API bridge go on; run it with --controllers=*,-evictionrequest-controller,-imperative-eviction-responder-controller to say so",
			"fieldManager", manager, "written", at, "object", klog.KObj(o), "kind", o.GetObjectKind().GroupVersionKind().Kind)
		g.recorder.Eventf(o, corev1.EventTypeNormal, EventStepAside,
			"%s of kube-controller-manager wrote this object at %s: evictionrequest-controller's own controllers step aside for it.",
			manager, at.UTC().Format(time.RFC3339))
		if g.onStep != nil {
			g.onStep()
		}
		close(g.stepped)
	})
}

// upstreamWrite finds in entries a write of kube-controller-manager's
// controllers that says they run now: one after the guard started. Entries
// have a second's precision (the time is rounded down): a write in the
// second the guard started may be the last of a kube-controller-manager
// that stopped just before, and does not count; if it runs, its next write
// does.
func (g *Guard) upstreamWrite(entries []metav1.ManagedFieldsEntry) (string, time.Time, bool) {
	for _, e := range entries {
		if e.Time == nil || !isUpstream(e.Manager) || !e.Time.After(g.since) {
			continue
		}
		return e.Manager, e.Time.Time, true
	}
	return "", time.Time{}, false
}

func isUpstream(manager string) bool {
	for _, m := range UpstreamManagers {
		if m == manager {
			return true
		}
	}
	return false
}

// Handler observes every object an informer adds or updates.
func (g *Guard) Handler(ctx context.Context) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { g.Observe(ctx, obj) },
		UpdateFunc: func(_, obj any) { g.Observe(ctx, obj) },
	}
}

// Yielding is c, run until the guard steps aside: then c stops and the
// term's other controllers go on.
func (g *Guard) Yielding(c controllermanager.Controller) controllermanager.Controller {
	return yielding{c: c, g: g}
}

type yielding struct {
	c controllermanager.Controller
	g *Guard
}

func (y yielding) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-y.g.SteppedAside():
			cancel()
		case <-ctx.Done():
		}
	}()
	return y.c.Run(ctx)
}

func (y yielding) Close(ctx context.Context) {
	if closer, ok := y.c.(controllermanager.Closer); ok {
		closer.Close(ctx)
	}
}

// ControllerName names the guard among a process's controllers.
const ControllerName = "step-aside-guard"

// Watch is the controller that shows the guard every Eviction and
// EvictionRequest of informers, for one leadership term: it removes its
// handlers when the term ends.
func Watch(ctx context.Context, guard *Guard, informers ...cache.SharedIndexInformer) (controllermanager.Controller, error) {
	var registrations []func()
	for _, informer := range informers {
		handle, err := informer.AddEventHandler(guard.Handler(ctx))
		if err != nil {
			return nil, err
		}
		registrations = append(registrations, func() { _ = informer.RemoveEventHandler(handle) })
	}
	return controllermanager.RunFunc(func(ctx context.Context) error {
		<-ctx.Done()
		for _, remove := range registrations {
			remove()
		}
		return nil
	}), nil
}
