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

package stepaside

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

var start = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// eviction is an Eviction with entries.
func eviction(entries ...metav1.ManagedFieldsEntry) *lifecyclev1alpha1.Eviction {
	return &lifecyclev1alpha1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pod-1-db-0", ManagedFields: entries}}
}

// request is an EvictionRequest with entries.
func request(entries ...metav1.ManagedFieldsEntry) *lifecyclev1alpha1.EvictionRequest {
	return &lifecyclev1alpha1.EvictionRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "drain-db-0", ManagedFields: entries}}
}

// applied is an entry of manager's apply of subresource at.
func applied(manager Counterpart, subresource string, at time.Time) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: string(manager), Operation: metav1.ManagedFieldsOperationApply, Subresource: subresource, Time: &metav1.Time{Time: at}}
}

// status is an entry of manager's status applied at.
func status(manager Counterpart, at time.Time) metav1.ManagedFieldsEntry {
	return applied(manager, "status", at)
}

// updated is an entry of manager's update of subresource at.
func updated(manager Counterpart, subresource string, at time.Time) metav1.ManagedFieldsEntry {
	e := applied(manager, subresource, at)
	e.Operation = metav1.ManagedFieldsOperationUpdate
	return e
}

// untimed is e without the time of its write.
func untimed(e metav1.ManagedFieldsEntry) metav1.ManagedFieldsEntry {
	e.Time = nil
	return e
}

// trusted is a Verifier of a policy in force; distrusted one that is not.
type trusted struct{}

func (trusted) Verify(context.Context) error { return nil }

type distrusted struct{}

func (distrusted) Verify(context.Context) error { return errors.New("no policy") }

// handler is what an informer calls.
type handler = interface {
	OnAdd(any, bool)
	OnUpdate(any, any)
}

// observed is what a guard did.
type observed struct {
	stepped   []Counterpart
	untrusted []Counterpart
	events    []string
	recorded  *Loaded
	// verified counts the policy's verifications.
	verified int
}

// counting is a Verifier that counts its verifications.
type counting struct {
	Verifier
	mu    *sync.Mutex
	count *int
}

func (c counting) Verify(ctx context.Context) error {
	c.mu.Lock()
	*c.count++
	c.mu.Unlock()
	return c.Verifier.Verify(ctx)
}

// observe runs a guard of policy on what the informer shows twice (a
// step-aside happens once) and returns what it did.
func observe(t *testing.T, policy Verifier, show func(handler)) observed {
	t.Helper()
	var got observed
	synctest.Test(t, func(t *testing.T) {
		recorder := record.NewFakeRecorder(8)
		client := fake.NewClientset()
		var mu sync.Mutex
		if policy != nil {
			policy = counting{Verifier: policy, mu: &mu, count: &got.verified}
		}
		g := New(Config{
			Clock: testingclock.NewFakeClock(start.Add(time.Second)), Recorder: recorder, Policy: policy,
			Record:      &Record{ConfigMaps: client.CoreV1(), Namespace: "evictionrequest-system", CallTimeout: time.Second},
			OnStep:      func(c Counterpart) { mu.Lock(); got.stepped = append(got.stepped, c); mu.Unlock() },
			OnUntrusted: func(c Counterpart) { mu.Lock(); got.untrusted = append(got.untrusted, c); mu.Unlock() },
		})
		h := g.Handler(t.Context())
		show(h)
		synctest.Wait()
		show(h)
		synctest.Wait()
		for len(recorder.Events) > 0 {
			got.events = append(got.events, <-recorder.Events)
		}
		var err error
		if got.recorded, err = g.cfg.Record.Load(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, c := range Counterparts {
			if want := slices.Contains(got.stepped, c); g.hasSteppedAside(c) != want {
				t.Errorf("%s: stepped aside %v, but OnStep called: %v", c, g.hasSteppedAside(c), want)
			}
		}
	})
	return got
}

// The guard steps aside for a counterpart at a write of its that it sees
// happen, at a place the built-in roles cannot write (an Eviction, an
// EvictionRequest's status), and for that counterpart alone: once, with an
// event naming what it saw, the metric's callback and a record. Each case
// that does not step aside differs from one that does in one input only:
// the place, the time, the first list, the manager.
func TestTheGuardStepsAsideForWhatOnlyKubeControllerManagerWrites(t *testing.T) {
	controller, evictorCP := EvictionRequestController, ImperativeEvictionResponder
	for _, tc := range []struct {
		name    string
		show    func(h handler)
		stepped []Counterpart
		place   string
	}{
		{"kube-controller-manager's evictor writes an Eviction's status", func(h handler) {
			h.OnUpdate(eviction(), eviction(status(evictorCP, start)))
		}, []Counterpart{evictorCP}, "Eviction status"},
		{"kube-controller-manager's controller writes an Eviction's status again", func(h handler) {
			h.OnUpdate(eviction(status(controller, start)), eviction(status(controller, start.Add(time.Second))))
		}, []Counterpart{controller}, "Eviction status"},
		{"kube-controller-manager's controller writes an EvictionRequest's status", func(h handler) {
			h.OnUpdate(request(), request(status(controller, start)))
		}, []Counterpart{controller}, "EvictionRequest status"},
		{"kube-controller-manager's controller creates an Eviction after the first list", func(h handler) {
			h.OnAdd(eviction(applied(controller, "", start)), false)
		}, []Counterpart{controller}, "Eviction"},
		{"both write an Eviction's status", func(h handler) {
			h.OnUpdate(eviction(), eviction(status(controller, start), status(evictorCP, start)))
		}, []Counterpart{controller, evictorCP}, "Eviction status"},
		{"kube-controller-manager's controller writes an Eviction's status the evictor wrote the same second", func(h handler) {
			h.OnUpdate(eviction(status(evictorCP, start)), eviction(status(evictorCP, start), status(controller, start)))
		}, []Counterpart{controller}, "Eviction status"},
		{"kube-controller-manager's controller applies an Eviction's status it updated the same second", func(h handler) {
			h.OnUpdate(eviction(updated(controller, "status", start)), eviction(updated(controller, "status", start), status(controller, start)))
		}, []Counterpart{controller}, "Eviction status"},
		{"kube-controller-manager's controller writes the status of an Eviction it created the same second", func(h handler) {
			h.OnUpdate(eviction(applied(controller, "", start)), eviction(applied(controller, "", start), status(controller, start)))
		}, []Counterpart{controller}, "Eviction status"},
		{"kube-controller-manager's controller writes an Eviction's status the cache held without a time", func(h handler) {
			h.OnUpdate(eviction(untimed(status(controller, start))), eviction(status(controller, start)))
		}, []Counterpart{controller}, "Eviction status"},

		{"an Eviction kube-controller-manager wrote a moment ago, in the first list", func(h handler) {
			h.OnAdd(eviction(applied(controller, "", start)), true)
		}, nil, ""},
		{"an EvictionRequest written under kube-controller-manager's controller's name, as a namespace editor may", func(h handler) {
			h.OnUpdate(request(), request(applied(controller, "", start)))
		}, nil, ""},
		{"an EvictionRequest created under the evictor's name, as a namespace editor may", func(h handler) {
			h.OnAdd(request(applied(evictorCP, "", start)), false)
		}, nil, ""},
		{"an EvictionRequest's status written under the evictor's name, where the evictor never writes", func(h handler) {
			h.OnUpdate(request(), request(status(evictorCP, start)))
		}, nil, ""},
		{"an Eviction written under the evictor's name, where the evictor never writes", func(h handler) {
			h.OnUpdate(eviction(), eviction(applied(evictorCP, "", start)))
		}, nil, ""},
		{"this project's controller and evictor write", func(h handler) {
			ours := metav1.ManagedFieldsEntry{Manager: lifecycle.FieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", Time: &metav1.Time{Time: start}}
			theEvictors := metav1.ManagedFieldsEntry{Manager: evictor.FieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", Time: &metav1.Time{Time: start}}
			h.OnUpdate(eviction(), eviction(ours, theEvictors))
		}, nil, ""},
		{"an Eviction restored from a backup after the first list, with kube-controller-manager's old entries", func(h handler) {
			h.OnAdd(eviction(applied(controller, "", start.Add(-24*time.Hour))), false)
		}, nil, ""},
		{"an Eviction whose entry is dated well ahead of now", func(h handler) {
			h.OnAdd(eviction(applied(controller, "", start.Add(time.Hour))), false)
		}, nil, ""},
		{"an Eviction restored over itself, kube-controller-manager's entry older", func(h handler) {
			h.OnUpdate(eviction(status(controller, start)), eviction(status(controller, start.Add(-time.Minute))))
		}, nil, ""},
		{"a resync", func(h handler) {
			obj := eviction(status(controller, start))
			h.OnUpdate(obj, obj)
		}, nil, ""},
		{"an Eviction's status entry without a time", func(h handler) {
			h.OnUpdate(eviction(), eviction(untimed(status(controller, start))))
		}, nil, ""},
		{"an object of a kind the guard does not watch", func(h handler) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-0", ManagedFields: []metav1.ManagedFieldsEntry{status(controller, start)}}}
			h.OnUpdate(&corev1.Pod{}, pod)
		}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := observe(t, trusted{}, tc.show)
			slices.Sort(got.stepped)
			slices.Sort(tc.stepped)
			if !slices.Equal(got.stepped, tc.stepped) {
				t.Fatalf("stepped aside for %v, want %v", got.stepped, tc.stepped)
			}
			if len(tc.stepped) == 0 {
				if got.recorded != nil || len(got.events) > 0 {
					t.Errorf("recorded %+v and events %v without stepping aside", got.recorded, got.events)
				}
				return
			}
			if len(got.events) != len(tc.stepped) {
				t.Errorf("events %v, want one per step-aside", got.events)
			}
			for _, event := range got.events {
				if !strings.Contains(event, EventStepAside) || !strings.Contains(event, "on this "+tc.place+" at ") || !strings.Contains(event, PolicyName) {
					t.Errorf("event %q, want %s naming the write seen (%s) and the policy", event, EventStepAside, tc.place)
				}
			}
			if got.recorded == nil || !slices.Equal(slices.Sorted(maps.Keys(got.recorded.Decisions)), tc.stepped) {
				t.Fatalf("recorded %+v, want a decision for each of %v", got.recorded, tc.stepped)
			}
			for c, d := range got.recorded.Decisions {
				kind, _, _ := strings.Cut(tc.place, " ")
				object := map[string]string{"Eviction": "Eviction shop/pod-1-db-0", "EvictionRequest": "EvictionRequest shop/drain-db-0"}[kind]
				if d.Object != object || d.Place != tc.place || d.Written.Before(start) || d.Written.After(start.Add(time.Second)) {
					t.Errorf("%s recorded %+v, want the object, %s and the time of the write", c, d, tc.place)
				}
			}
		})
	}
}

// A field manager's name proves who wrote only while the policy that
// reserves it is in force: otherwise the guard counts the write as
// untrusted (the metric) and steps aside for nothing. The write is shown
// twice: untrusted, each is verified and counted; once the guard stepped
// aside, a write asks nothing more of kube-apiserver.
func TestTheGuardTrustsANameOnlyUnderThePolicy(t *testing.T) {
	show := func(h handler) {
		h.OnUpdate(eviction(), eviction(status(ImperativeEvictionResponder, start)))
	}
	for _, tc := range []struct {
		name      string
		policy    Verifier
		stepped   bool
		untrusted int
		verified  int
	}{
		{"in force", trusted{}, true, 0, 1},
		{"not in force", distrusted{}, false, 2, 2},
		{"none configured", nil, false, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := observe(t, tc.policy, show)
			if stepped := len(got.stepped) > 0; stepped != tc.stepped {
				t.Errorf("stepped aside %v, want %v", got.stepped, tc.stepped)
			}
			if len(got.untrusted) != tc.untrusted {
				t.Errorf("untrusted writes %v, want %d: each write seen, only when not stepping aside", got.untrusted, tc.untrusted)
			}
			if got.verified != tc.verified {
				t.Errorf("verified the policy %d times, want %d", got.verified, tc.verified)
			}
		})
	}
}

// blocking is a Verifier of a policy in force whose verifications wait
// until release is closed.
type blocking struct {
	release chan struct{}
	calls   *atomic.Int32
}

func (b blocking) Verify(ctx context.Context) error {
	b.calls.Add(1)
	<-b.release
	return nil
}

// The guard verifies one write of a counterpart at a time: the writes seen
// meanwhile ask kube-apiserver nothing more. A verification that ends
// after the guard stepped aside otherwise (a new term read the record)
// steps aside no second time: one OnStep, no event.
func TestTheGuardVerifiesOneWriteAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		rec := &Record{ConfigMaps: client.CoreV1(), Namespace: "evictionrequest-system", CallTimeout: time.Second}
		recorder := record.NewFakeRecorder(2)
		policy := blocking{release: make(chan struct{}), calls: &atomic.Int32{}}
		var steps atomic.Int32
		g := New(Config{Clock: testingclock.NewFakeClock(start), Recorder: recorder, Record: rec, Policy: policy,
			OnStep: func(Counterpart) { steps.Add(1) }})
		h := g.Handler(t.Context())
		h.OnUpdate(eviction(), eviction(status(ImperativeEvictionResponder, start)))
		h.OnUpdate(eviction(), eviction(status(ImperativeEvictionResponder, start.Add(time.Second))))
		synctest.Wait()
		if calls := policy.calls.Load(); calls != 1 {
			t.Errorf("verified %d writes at once, want 1", calls)
		}
		cm := recordWith(rec.Namespace, map[string]string{string(ImperativeEvictionResponder): `{"object":"Eviction shop/pod-1-db-0"}`})
		if _, err := client.CoreV1().ConfigMaps(rec.Namespace).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		g.Resume(t.Context())
		close(policy.release)
		synctest.Wait()
		if n := steps.Load(); n != 1 {
			t.Errorf("stepped aside %d times, want once", n)
		}
		if len(recorder.Events) != 0 {
			t.Errorf("recorded %q after the record stepped aside already", <-recorder.Events)
		}
	})
}

// A recorded decision outlives the process: a guard whose record names a
// counterpart keeps that controller alone from starting, in every term,
// before anything is written; without a record both run. A record that
// cannot be read holds the yielding controllers, retried until it can be,
// while the others (the actors) run. A record of an earlier release (which
// trusted any writer's field manager) decides nothing; one an admin wrote
// without data holds both.
func TestARecordedStepAsideHoldsAcrossRestarts(t *testing.T) {
	decision := `{"object":"Eviction shop/pod-1-db-0","place":"Eviction status","written":"2026-11-28T12:00:00Z"}`
	for _, tc := range []struct {
		name       string
		data       map[string]string // nil: no record
		unreadable bool
		runs       map[Counterpart]bool
	}{
		{name: "not recorded", runs: map[Counterpart]bool{EvictionRequestController: true, ImperativeEvictionResponder: true}},
		{name: "recorded for the evictor", data: map[string]string{string(ImperativeEvictionResponder): decision},
			runs: map[Counterpart]bool{EvictionRequestController: true}},
		{name: "recorded for the controller", data: map[string]string{string(EvictionRequestController): decision},
			runs: map[Counterpart]bool{ImperativeEvictionResponder: true}},
		{name: "an earlier release's record", data: map[string]string{"fieldManager": "evictionrequest-controller", "object": "EvictionRequest shop/x", "written": "2026-11-28T12:00:00Z"},
			runs: map[Counterpart]bool{EvictionRequestController: true, ImperativeEvictionResponder: true}},
		{name: "a value this release did not write", data: map[string]string{string(ImperativeEvictionResponder): "true"},
			runs: map[Counterpart]bool{EvictionRequestController: true, ImperativeEvictionResponder: true}},
		{name: "an admin's record without data", data: map[string]string{}, runs: map[Counterpart]bool{}},
		{name: "the record cannot be read at first", unreadable: true, runs: map[Counterpart]bool{EvictionRequestController: true, ImperativeEvictionResponder: true}},
		{name: "recorded for the evictor, and cannot be read at first", data: map[string]string{string(ImperativeEvictionResponder): decision}, unreadable: true,
			runs: map[Counterpart]bool{EvictionRequestController: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client := fake.NewClientset()
				rec := &Record{ConfigMaps: client.CoreV1(), Namespace: "evictionrequest-system", CallTimeout: time.Second}
				if tc.data != nil {
					cm := recordWith(rec.Namespace, tc.data)
					if _, err := client.CoreV1().ConfigMaps(rec.Namespace).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				var readable atomic.Bool
				readable.Store(!tc.unreadable)
				client.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
					if !readable.Load() {
						return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, RecordName, errors.New("no Role"))
					}
					return false, nil, nil
				})
				g := New(Config{Clock: testingclock.NewFakeClock(start), Recorder: record.NewFakeRecorder(1), Record: rec, Policy: trusted{}})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if _, err := Watch(ctx, g); err != nil {
					t.Fatal(err)
				}
				ran := map[Counterpart]*atomic.Bool{}
				for _, c := range Counterparts {
					flag := &atomic.Bool{}
					ran[c] = flag
					go func() { _ = g.Yielding(c, running(flag)).Run(ctx) }()
				}
				var actor atomic.Bool
				go func() { _ = running(&actor).Run(ctx) }()
				synctest.Wait()
				if tc.unreadable {
					for _, c := range Counterparts {
						if ran[c].Load() {
							t.Errorf("%s ran before the record could be read", c)
						}
					}
					readable.Store(true)
					time.Sleep(retry.Cap)
					synctest.Wait()
				}
				for _, c := range Counterparts {
					if ran[c].Load() != tc.runs[c] {
						t.Errorf("%s ran: %v, want %v", c, ran[c].Load(), tc.runs[c])
					}
				}
				if !actor.Load() {
					t.Error("the actor did not run")
				}
			})
		})
	}
}

// running is a controller that says it ran and runs until stopped.
func running(ran *atomic.Bool) controllermanager.Controller {
	return controllermanager.RunFunc(func(ctx context.Context) error {
		ran.Store(true)
		<-ctx.Done()
		return nil
	})
}

// The decision is recorded even when writing it fails at first and the
// term that took it ends meanwhile: the next leader reads it. A second
// counterpart's decision joins the first in the same record. A next term
// of the same process reads the record and steps aside no second time.
func TestTheDecisionIsRecordedAfterTheTermEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		var failures atomic.Int32
		client.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
			if failures.Add(1) <= 3 {
				return true, nil, errors.New("connection refused")
			}
			return false, nil, nil
		})
		rec := &Record{ConfigMaps: client.CoreV1(), Namespace: "evictionrequest-system", CallTimeout: time.Second}
		var steps atomic.Int32
		g := New(Config{Clock: testingclock.NewFakeClock(start), Recorder: record.NewFakeRecorder(2), Record: rec, Policy: trusted{},
			OnStep: func(Counterpart) { steps.Add(1) }})
		ctx, cancel := context.WithCancel(t.Context())
		g.Handler(ctx).OnUpdate(eviction(), eviction(status(ImperativeEvictionResponder, start)))
		synctest.Wait()
		cancel()
		time.Sleep(3 * retry.Cap)
		synctest.Wait()
		g.Handler(t.Context()).OnUpdate(request(), request(status(EvictionRequestController, start)))
		synctest.Wait()
		loaded, err := rec.Load(t.Context())
		if err != nil || loaded == nil {
			t.Fatalf("record %+v (%v)", loaded, err)
		}
		if got := slices.Sorted(maps.Keys(loaded.Decisions)); !slices.Equal(got, Counterparts) {
			t.Errorf("recorded %v, want both counterparts", got)
		}
		if _, err := Watch(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := steps.Load(); n != int32(len(Counterparts)) {
			t.Errorf("stepped aside %d times after the next term, want once for each counterpart", n)
		}
	})
}

// A yielding controller stops when the guard steps aside for its
// counterpart; one yielding to the other counterpart, and a controller that
// does not yield, go on.
func TestYieldingControllersStopWhenTheGuardStepsAsideForTheirCounterpart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Config{Clock: testingclock.NewFakeClock(start), Recorder: record.NewFakeRecorder(1), Policy: trusted{}})
		var evictorStopped, controllerStopped, otherStopped atomic.Bool
		stoppable := func(stopped *atomic.Bool) controllermanager.Controller {
			return controllermanager.RunFunc(func(ctx context.Context) error {
				<-ctx.Done()
				stopped.Store(true)
				return nil
			})
		}
		ctx, cancel := context.WithCancel(t.Context())
		go func() { _ = g.Yielding(ImperativeEvictionResponder, stoppable(&evictorStopped)).Run(ctx) }()
		go func() { _ = g.Yielding(EvictionRequestController, stoppable(&controllerStopped)).Run(ctx) }()
		go func() { _ = stoppable(&otherStopped).Run(ctx) }()
		synctest.Wait()
		g.Handler(ctx).OnUpdate(eviction(), eviction(status(ImperativeEvictionResponder, start)))
		synctest.Wait()
		if !evictorStopped.Load() || controllerStopped.Load() || otherStopped.Load() {
			t.Errorf("stopped: the evictor %v, the controller %v, the other %v; want only the evictor",
				evictorStopped.Load(), controllerStopped.Load(), otherStopped.Load())
		}
		cancel()
		synctest.Wait()
	})
}
