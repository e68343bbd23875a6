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
// at the first write of kube-controller-manager's it sees happen, stops
// this process's two controllers and records that it did (Record), so that
// they stay stopped across restarts: the actors (the node drain, the
// eviction API bridge) go on, on kube-controller-manager's controllers.
package stepaside

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// UpstreamManagers are the field managers of kube-controller-manager's two
// controllers (its controller names), which it applies the status of
// Evictions and EvictionRequests with.
var UpstreamManagers = []string{"evictionrequest-controller", "imperative-eviction-responder-controller"}

// CacheTransform is the transform of the caches the guard reads: pods
// trimmed to what the controllers read, and of every object's managedFields
// only kube-controller-manager's entries, which tell the guard it runs.
var CacheTransform = cachetransform.TrimPodsStripManagedFieldsBut(UpstreamManagers...)

// EventStepAside is the reason of the event the Guard records on the object
// kube-controller-manager wrote when it steps aside.
const EventStepAside = "ControllerSteppedAside"

// recentWrite bounds how far from now the time of a write of
// kube-controller-manager's may be for the guard to count it: a restored
// or copied object carries the entries of writes long past, which say
// nothing of now. It is wide, for clocks that disagree.
const recentWrite = 10 * time.Minute

// retry is how the guard retries the record's reads and writes: until they
// succeed, at most a minute apart.
var retry = wait.Backoff{Duration: time.Second, Factor: 2, Steps: math.MaxInt32, Cap: time.Minute}

// Guard says when another controller acts on the objects of this
// process's controllers.
type Guard struct {
	clock    clock.PassiveClock
	recorder record.EventRecorder
	// record keeps the decision across restarts; nil keeps it for the
	// process's life only.
	record *Record

	once    sync.Once
	stepped chan struct{}
	// onStep, when set, is called once when the guard steps aside (the
	// metric).
	onStep func()

	mu sync.Mutex
	// resolved is closed once the current term read the record: the
	// yielding controllers wait for it.
	resolved chan struct{}
}

// New returns a guard on clk that records its event with recorder, its
// decision in rec (may be nil), and calls onStep (may be nil) when it
// steps aside.
func New(clk clock.PassiveClock, recorder record.EventRecorder, rec *Record, onStep func()) *Guard {
	resolved := make(chan struct{})
	close(resolved)
	return &Guard{clock: clk, recorder: recorder, record: rec, stepped: make(chan struct{}), onStep: onStep, resolved: resolved}
}

// SteppedAside is closed once the guard saw another controller act.
func (g *Guard) SteppedAside() <-chan struct{} {
	return g.stepped
}

// Resume reads the record at the start of a leadership term, before the
// controllers run, and steps aside when it says this process, or an
// earlier one, stepped aside before. The yielding controllers wait until
// it is read: a record that cannot be read (kube-apiserver unreachable, a
// Role missing) holds them, retried until it can, while the term's other
// controllers, the actors, go on.
func (g *Guard) Resume(ctx context.Context) {
	resolved := make(chan struct{})
	g.mu.Lock()
	g.resolved = resolved
	g.mu.Unlock()
	if g.record == nil || g.hasSteppedAside() {
		close(resolved)
		return
	}
	logger := klog.FromContext(ctx)
	read := func(ctx context.Context) (bool, error) {
		d, err := g.record.Load(ctx)
		if err != nil {
			logger.Error(err, "evictionrequest-controller and imperative-eviction-responder-controller wait until they can read whether they stepped aside; the node drain and the eviction API bridge go on", "record", g.record.String())
			return false, nil
		}
		if d != nil {
			g.once.Do(func() {
				logger.Info("evictionrequest-controller and imperative-eviction-responder-controller stay aside, as recorded when another controller of lifecycle.k8s.io wrote: "+
					"the node drain and the eviction API bridge go on; once kube-controller-manager no longer runs its own, delete the record and restart this process to run them again",
					"record", g.record.String(), "fieldManager", d.Manager, "object", d.Object, "written", d.Written)
				g.step()
			})
		}
		return true, nil
	}
	if done, _ := read(ctx); done {
		close(resolved)
		return
	}
	go func() {
		defer close(resolved)
		_ = wait.ExponentialBackoffWithContext(ctx, retry, read)
	}()
}

// hasSteppedAside is true once the guard stepped aside.
func (g *Guard) hasSteppedAside() bool {
	select {
	case <-g.stepped:
		return true
	default:
		return false
	}
}

// recordRead is closed once the current term read the record.
func (g *Guard) recordRead() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.resolved
}

// observe steps aside when obj shows a write of kube-controller-manager's
// controllers that old (nil for an object new to the cache) did not.
func (g *Guard) observe(ctx context.Context, old, obj any) {
	o, ok := obj.(interface {
		metav1.Object
		runtime.Object
	})
	if !ok {
		return
	}
	var before []metav1.ManagedFieldsEntry
	if old, ok := old.(metav1.Object); ok {
		before = old.GetManagedFields()
	}
	write, ok := upstreamWrite(before, o.GetManagedFields(), g.clock.Now())
	if !ok {
		return
	}
	g.once.Do(func() {
		kind := kindOf(o)
		klog.FromContext(ctx).Info("Another controller acts on lifecycle.k8s.io: this process's evictionrequest-controller and imperative-eviction-responder-controller step aside, "+
			"its node drain and eviction API bridge go on; run it with --controllers=*,-evictionrequest-controller,-imperative-eviction-responder-controller to say so",
			"fieldManager", write.Manager, "written", write.Time, "object", klog.KObj(o), "kind", kind)
		g.recorder.Eventf(o, corev1.EventTypeNormal, EventStepAside,
			"%s of kube-controller-manager wrote this object at %s: evictionrequest-controller's own controllers step aside for it.",
			write.Manager, write.Time.UTC().Format(time.RFC3339))
		g.step()
		// The record outlives the term: a leader that loses its Lease
		// meanwhile still writes it, for the next leader to read.
		go g.save(context.WithoutCancel(ctx), Decision{Manager: write.Manager, Object: fmt.Sprintf("%s %s", kind, klog.KObj(o)), Written: write.Time.Time})
	})
}

// kindOf is the kind of obj: objects of a typed informer's cache carry
// none themselves.
func kindOf(obj runtime.Object) string {
	if kinds, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(kinds) > 0 {
		return kinds[0].Kind
	}
	return obj.GetObjectKind().GroupVersionKind().Kind
}

// step stops the yielding controllers, once.
func (g *Guard) step() {
	if g.onStep != nil {
		g.onStep()
	}
	close(g.stepped)
}

// save records d until it is kept; the controllers stepped aside already.
func (g *Guard) save(ctx context.Context, d Decision) {
	if g.record == nil {
		return
	}
	logger := klog.FromContext(ctx)
	_ = wait.ExponentialBackoffWithContext(ctx, retry, func(ctx context.Context) (bool, error) {
		if err := g.record.Save(ctx, d); err != nil {
			logger.Error(err, "Recording that the controllers stepped aside, retrying: until it is recorded, a restarted process runs them until kube-controller-manager's next write", "record", g.record.String())
			return false, nil
		}
		return true, nil
	})
}

// upstreamWrite finds in after an entry of kube-controller-manager's
// controllers that before lacks or holds with an older time, written
// within recentWrite of now: a write seen as it happened. Entries already
// in the cache's first list say nothing of now: a kube-controller-manager
// that handed its objects over and stopped wrote them, or a release of
// this project that used upstream's field manager; nor do old entries on
// an object restored from a backup. Comparing entries rather than the
// process's start time holds whatever the skew between this process and
// kube-apiserver, within recentWrite.
func upstreamWrite(before, after []metav1.ManagedFieldsEntry, now time.Time) (metav1.ManagedFieldsEntry, bool) {
	for _, e := range after {
		if e.Time == nil || !slices.Contains(UpstreamManagers, e.Manager) {
			continue
		}
		if age := now.Sub(e.Time.Time); age > recentWrite || age < -recentWrite {
			continue
		}
		seen := func(b metav1.ManagedFieldsEntry) bool {
			return b.Manager == e.Manager && b.Operation == e.Operation && b.Subresource == e.Subresource && b.Time != nil && !e.Time.After(b.Time.Time)
		}
		if !slices.ContainsFunc(before, seen) {
			return e, true
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

// Handler observes every object an informer adds after its first list, and
// every update.
func (g *Guard) Handler(ctx context.Context) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if !isInInitialList {
				g.observe(ctx, nil, obj)
			}
		},
		UpdateFunc: func(old, obj any) { g.observe(ctx, old, obj) },
	}
}

// Yielding is c, run until the guard steps aside: then c stops (or does not
// start) and the term's other controllers go on.
func (g *Guard) Yielding(c controllermanager.Controller) controllermanager.Controller {
	return yielding{c: c, g: g}
}

type yielding struct {
	c controllermanager.Controller
	g *Guard
}

func (y yielding) Run(ctx context.Context) error {
	select {
	case <-y.g.recordRead():
	case <-ctx.Done():
		return nil
	}
	if ctx.Err() != nil || y.g.hasSteppedAside() {
		return nil
	}
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
// EvictionRequest of informers, for one leadership term, after it resumed
// the recorded decision (Resume): it is built before the controllers it
// guards, which wait for the record to be read. It removes its handlers
// when the term ends.
func Watch(ctx context.Context, guard *Guard, informers ...cache.SharedIndexInformer) (controllermanager.Controller, error) {
	guard.Resume(ctx)
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
