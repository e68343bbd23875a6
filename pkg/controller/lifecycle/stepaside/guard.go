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
// is on (kind's and kubeadm's featureGates turn it on in every component),
// possibly only one of them (its --controllers). Two controllers of the
// same objects rewrite each other's status in a loop, so the Guard watches
// who writes the Evictions and EvictionRequests and, at the first write of
// one of kube-controller-manager's controllers it sees happen, stops this
// process's controller that does the same job, that one alone, and records
// it (Record), so that it stays stopped across restarts: the other
// controllers and the actors (the node drain, the eviction API bridge) go
// on.
//
// A field manager's name is whatever a writer says it is, so the guard
// counts a write only where Kubernetes' built-in roles cannot write
// (evidence), and only while a ValidatingAdmissionPolicy reserves the two
// names for kube-controller-manager's identities (Policy): a namespace
// editor or a responder writing under either name is refused by
// kube-apiserver, and can neither stop our controllers nor pass for
// kube-controller-manager.
package stepaside

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/controller"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

// EventStepAside is the reason of the event the Guard records on the object
// whose write made one of its controllers step aside.
const EventStepAside = "ControllerSteppedAside"

// retry is how the guard retries the record's reads and writes: until they
// succeed, at most a minute apart.
var retry = wait.Backoff{Duration: time.Second, Factor: 2, Steps: math.MaxInt32, Cap: time.Minute}

// Config is what a Guard works with.
type Config struct {
	// Clock is the guard's notion of now.
	Clock clock.PassiveClock
	// Recorder records the event of a step-aside.
	Recorder record.EventRecorder
	// Record keeps the decisions across restarts; nil keeps them for the
	// process's life only.
	Record *Record
	// Policy says whether the counterparts' field managers can be
	// trusted; without one, no write is.
	Policy Verifier
	// OnStep, when set, is called once for each counterpart the guard
	// steps aside for (the metric).
	OnStep func(Counterpart)
	// OnUntrusted, when set, is called for each write under a
	// counterpart's name that the guard could not trust (the metric).
	OnUntrusted func(Counterpart)
}

// Guard says when another controller does the job of one of this
// process's controllers.
type Guard struct {
	cfg Config

	mu sync.Mutex
	// stepped holds, for each counterpart, a channel closed once the
	// guard stepped aside for it.
	stepped map[Counterpart]chan struct{}
	// verifying is true for a counterpart while a write of its is being
	// verified: one at a time.
	verifying map[Counterpart]bool
	// resolved is closed once the current term read the record: the
	// yielding controllers wait for it.
	resolved chan struct{}
}

// New returns a guard of cfg.
func New(cfg Config) *Guard {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	resolved := make(chan struct{})
	close(resolved)
	g := &Guard{cfg: cfg, stepped: map[Counterpart]chan struct{}{}, verifying: map[Counterpart]bool{}, resolved: resolved}
	for _, c := range Counterparts {
		g.stepped[c] = make(chan struct{})
	}
	return g
}

// SteppedAside is closed once the guard stepped aside for c.
func (g *Guard) SteppedAside(c Counterpart) <-chan struct{} {
	return g.stepped[c]
}

// hasSteppedAside is true once the guard stepped aside for c.
func (g *Guard) hasSteppedAside(c Counterpart) bool {
	select {
	case <-g.stepped[c]:
		return true
	default:
		return false
	}
}

// Resume reads the record at the start of a leadership term, before the
// controllers run, and steps aside for the counterparts it names. The
// yielding controllers wait until it is read: a record that cannot be read
// (kube-apiserver unreachable, a Role missing) holds them, retried until it
// can, while the term's other controllers, the actors, go on.
func (g *Guard) Resume(ctx context.Context) {
	resolved := make(chan struct{})
	g.mu.Lock()
	g.resolved = resolved
	g.mu.Unlock()
	if g.cfg.Record == nil {
		close(resolved)
		return
	}
	logger := klog.FromContext(ctx)
	read := func(ctx context.Context) (bool, error) {
		loaded, err := g.cfg.Record.Load(ctx)
		if err != nil {
			logger.Error(err, "The controllers that step aside for kube-controller-manager's wait until they can read whether they did; the node drain and the eviction API bridge go on", "record", g.cfg.Record.String())
			return false, nil
		}
		g.resume(ctx, loaded)
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

// resume steps aside for the counterparts loaded names.
func (g *Guard) resume(ctx context.Context, loaded *Loaded) {
	if loaded == nil {
		return
	}
	logger := klog.FromContext(ctx)
	for key, why := range loaded.Ignored {
		logger.Info("Ignoring a key of the step-aside record", "record", g.cfg.Record.String(), "key", key, "reason", why)
	}
	for _, c := range Counterparts {
		d, ok := loaded.Decisions[c]
		if !ok || !g.markStepped(c) {
			continue
		}
		logger.Info("This process's controller stays aside for kube-controller-manager's, as recorded: "+
			"once kube-controller-manager no longer runs it, remove its key from the record and restart this process to run it again",
			"controller", c, "record", g.cfg.Record.String(), "object", d.Object, "place", d.Place, "written", d.Written)
	}
}

// markStepped closes c's channel and calls OnStep, once; false when the
// guard had stepped aside for c already.
func (g *Guard) markStepped(c Counterpart) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hasSteppedAside(c) {
		return false
	}
	close(g.stepped[c])
	if g.cfg.OnStep != nil {
		g.cfg.OnStep(c)
	}
	return true
}

// recordRead is closed once the current term read the record.
func (g *Guard) recordRead() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.resolved
}

// guarded is an object of lifecycle.k8s.io the guard watches.
type guarded interface {
	metav1.Object
	runtime.Object
}

// kindOf is the kind of obj, which objects of a typed informer's cache do
// not carry themselves; "" for an object the guard does not watch.
func kindOf(obj any) (guarded, string) {
	switch o := obj.(type) {
	case *lifecyclev1alpha1.Eviction:
		return o, "Eviction"
	case *lifecyclev1alpha1.EvictionRequest:
		return o, "EvictionRequest"
	}
	return nil, ""
}

// observe considers the writes of counterparts that obj shows and old
// (nil for an object new to the cache) did not.
func (g *Guard) observe(ctx context.Context, old, obj any) {
	o, kind := kindOf(obj)
	if o == nil {
		return
	}
	var before []metav1.ManagedFieldsEntry
	if old, ok := old.(metav1.Object); ok {
		before = old.GetManagedFields()
	}
	for _, w := range writesSeen(kind, before, o.GetManagedFields(), g.cfg.Clock.Now()) {
		if g.startVerifying(w.Counterpart) {
			go g.confirm(ctx, w, o)
		}
	}
}

// startVerifying is true when a write of c is worth verifying: the guard
// has not stepped aside for c, and verifies no other write of c.
func (g *Guard) startVerifying(c Counterpart) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hasSteppedAside(c) || g.verifying[c] {
		return false
	}
	g.verifying[c] = true
	return true
}

// confirm steps aside for the counterpart that made w on o, once the
// policy that reserves its name is found in force; otherwise the write
// proves nothing and the controller goes on.
func (g *Guard) confirm(ctx context.Context, w Write, o guarded) {
	defer func() {
		g.mu.Lock()
		g.verifying[w.Counterpart] = false
		g.mu.Unlock()
	}()
	logger := klog.FromContext(ctx)
	err := fmt.Errorf("no policy reserves the field manager")
	if g.cfg.Policy != nil {
		err = g.cfg.Policy.Verify(ctx)
	}
	if err != nil {
		logger.Error(err, "Seen a write under the field manager of one of kube-controller-manager's controllers, which nothing proves kube-controller-manager made: "+
			"this process's controller goes on; to step it aside, apply the ValidatingAdmissionPolicy "+PolicyName+" of the install, or run with --controllers=-"+string(w.Counterpart),
			"controller", w.Counterpart, "object", klog.KObj(o), "place", w.Place(), "operation", w.Operation, "written", w.Time)
		if g.cfg.OnUntrusted != nil {
			g.cfg.OnUntrusted(w.Counterpart)
		}
		return
	}
	if !g.markStepped(w.Counterpart) {
		return
	}
	logger.Info("Kube-controller-manager runs a controller of lifecycle.k8s.io: this process's controller of the same name steps aside for it, the others go on; "+
		"run this process with --controllers=*,-"+string(w.Counterpart)+" to say so",
		"controller", w.Counterpart, "object", klog.KObj(o), "place", w.Place(), "operation", w.Operation, "written", w.Time)
	g.cfg.Recorder.Eventf(o, corev1.EventTypeNormal, EventStepAside,
		"Seen: %s by field manager %s on this %s at %s, a name ValidatingAdmissionPolicy %s reserves for kube-controller-manager's identities. evictionrequest-controller's own %s steps aside for it.",
		w.Operation, w.Counterpart, w.Place(), w.Time.UTC().Format(time.RFC3339), PolicyName, w.Counterpart)
	// The record outlives the term: a leader that loses its Lease
	// meanwhile still writes it, for the next leader to read.
	go g.save(context.WithoutCancel(ctx), w.Counterpart, Decision{Object: fmt.Sprintf("%s %s", w.Kind, klog.KObj(o)), Place: w.Place(), Written: w.Time})
}

// save records d for c until it is kept; the controller stepped aside
// already.
func (g *Guard) save(ctx context.Context, c Counterpart, d Decision) {
	if g.cfg.Record == nil {
		return
	}
	logger := klog.FromContext(ctx)
	_ = wait.ExponentialBackoffWithContext(ctx, retry, func(ctx context.Context) (bool, error) {
		if err := g.cfg.Record.Save(ctx, c, d); err != nil {
			logger.Error(err, "Recording that a controller stepped aside, retrying: until it is recorded, a restarted process runs it until kube-controller-manager's next write", "controller", c, "record", g.cfg.Record.String())
			return false, nil
		}
		return true, nil
	})
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

// Yielding is ctrl, run until the guard steps aside for c: then ctrl stops
// (or does not start) and the term's other controllers go on.
func (g *Guard) Yielding(c Counterpart, ctrl controllermanager.Controller) controllermanager.Controller {
	return yielding{c: ctrl, counterpart: c, g: g}
}

type yielding struct {
	c           controllermanager.Controller
	counterpart Counterpart
	g           *Guard
}

func (y yielding) Run(ctx context.Context) error {
	select {
	case <-y.g.recordRead():
	case <-ctx.Done():
		return nil
	}
	if ctx.Err() != nil || y.g.hasSteppedAside(y.counterpart) {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-y.g.SteppedAside(y.counterpart):
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

// ControllerName names the guard among a process's controllers:
// --controllers=-step-aside-guard turns the automatic step-aside off.
const ControllerName = "step-aside-guard"

// Watch is the controller that shows the guard every Eviction and
// EvictionRequest of informers, for one leadership term, after it resumed
// the recorded decisions (Resume): it is built before the controllers it
// guards, which wait for the record to be read. It removes its handlers
// when the term ends.
func Watch(ctx context.Context, guard *Guard, informers ...cache.SharedIndexInformer) (controllermanager.Controller, error) {
	guard.Resume(ctx)
	w := &watch{}
	for _, informer := range informers {
		if err := w.handlers.Add(informer, guard.Handler(ctx)); err != nil {
			w.Close(ctx)
			return nil, err
		}
	}
	return w, nil
}

// RegisterInformers asks factory for the informers Watch shows the guard,
// before it starts: a process that shares its informers with every term
// starts them once.
func RegisterInformers(factory informers.SharedInformerFactory) error {
	lifecycleInformers := factory.Lifecycle().V1alpha1()
	lifecycleInformers.Evictions().Informer()
	lifecycleInformers.EvictionRequests().Informer()
	return nil
}

// watch is the controller Watch returns: it only holds its handlers for
// the term.
type watch struct {
	handlers controller.Handlers
}

// Run waits for the term's end and removes the handlers.
func (w *watch) Run(ctx context.Context) error {
	<-ctx.Done()
	w.handlers.RemoveAll(ctx)
	return nil
}

// Close removes the handlers of a watch that will not run.
func (w *watch) Close(ctx context.Context) {
	w.handlers.RemoveAll(ctx)
}
