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
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

var start = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// written is an Eviction whose status each manager wrote at its time.
func written(entries ...metav1.ManagedFieldsEntry) *lifecyclev1alpha1.Eviction {
	return &lifecyclev1alpha1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pod-1-db-0", ManagedFields: entries}}
}

// status is an entry of manager's status applied at.
func status(manager string, at time.Time) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", Time: &metav1.Time{Time: at}}
}

const (
	upstreamController = "evictionrequest-controller"
	upstreamEvictor    = "imperative-eviction-responder-controller"
)

// The guard steps aside at a write of kube-controller-manager's controllers
// it sees happen (an entry of theirs new to an update, or with a new time,
// or on an object created after the first list), once, with an event, the
// metric's callback and a record; not at its own controllers' writes, and
// not at entries of the first list: those of a kube-controller-manager that
// handed its objects over and stopped, or of an earlier release of this
// project (which used upstream's field manager), written before this
// process started whatever its clock says.
func TestTheGuardStepsAsideForKubeControllerManagersWrites(t *testing.T) {
	ours := status(lifecycle.FieldManager, start)
	for _, tc := range []struct {
		name    string
		observe func(h handler)
		stepped bool
	}{
		{"kube-controller-manager's evictor writes for the first time", func(h handler) {
			h.OnUpdate(written(ours), written(ours, status(upstreamEvictor, start)))
		}, true},
		{"kube-controller-manager's controller writes again", func(h handler) {
			h.OnUpdate(written(status(upstreamController, start)), written(status(upstreamController, start.Add(time.Second))))
		}, true},
		{"an object kube-controller-manager wrote appears after the first list", func(h handler) {
			h.OnAdd(written(status(upstreamController, start)), false)
		}, true},
		{"an object kube-controller-manager wrote, in the first list", func(h handler) {
			h.OnAdd(written(status(upstreamController, start.Add(time.Hour))), true)
		}, false},
		{"this project's controller writes beside an old entry of kube-controller-manager's", func(h handler) {
			old := status(upstreamEvictor, start.Add(-time.Hour))
			h.OnUpdate(written(old, ours), written(old, status(lifecycle.FieldManager, start.Add(time.Second))))
		}, false},
		{"this project's evictor writes", func(h handler) {
			h.OnUpdate(written(), written(status(evictor.FieldManager, start)))
		}, false},
		{"an object restored from a backup after the first list, with kube-controller-manager's old entries", func(h handler) {
			h.OnAdd(written(status(upstreamController, start.Add(-24*time.Hour))), false)
		}, false},
		{"an object restored over itself, kube-controller-manager's entry older", func(h handler) {
			h.OnUpdate(written(status(upstreamController, start)), written(status(upstreamController, start.Add(-time.Minute))))
		}, false},
		{"a resync", func(h handler) {
			obj := written(status(upstreamController, start))
			h.OnUpdate(obj, obj)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				recorder := record.NewFakeRecorder(4)
				client := fake.NewClientset()
				calls := 0
				g := New(testingclock.NewFakeClock(start.Add(time.Second)), recorder, &Record{ConfigMaps: client.CoreV1(), Namespace: "evictionrequest-system", CallTimeout: time.Second}, func() { calls++ })
				h := g.Handler(t.Context())
				tc.observe(h)
				tc.observe(h)
				synctest.Wait()
				d, err := g.record.Load(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if stepped := g.hasSteppedAside(); stepped != tc.stepped {
					t.Fatalf("stepped aside: %v, want %v", stepped, tc.stepped)
				}
				if !tc.stepped {
					if d != nil {
						t.Errorf("recorded %+v without stepping aside", d)
					}
					return
				}
				if calls != 1 || len(recorder.Events) != 1 {
					t.Errorf("%d calls and %d events, want one of each", calls, len(recorder.Events))
				}
				if event := <-recorder.Events; !strings.Contains(event, EventStepAside) {
					t.Errorf("event %q, want %s", event, EventStepAside)
				}
				if d == nil || (d.Manager != upstreamEvictor && d.Manager != upstreamController) || d.Object != "Eviction shop/pod-1-db-0" {
					t.Errorf("recorded %+v, want the write and the object", d)
				}
			})
		})
	}
}

// handler is what an informer calls.
type handler = interface {
	OnAdd(any, bool)
	OnUpdate(any, any)
}

// The decision outlives the process: a guard whose record says an earlier
// process stepped aside keeps its controllers from starting, in every term,
// before anything is written; without a record they run. A record that
// cannot be read holds the yielding controllers, retried until it can be,
// while the others (the actors) run.
func TestARecordedStepAsideHoldsAcrossRestarts(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		recorded, unreadable   bool
		runs, runsOnceReadable bool
	}{
		{name: "recorded", recorded: true},
		{name: "not recorded", runs: true},
		{name: "the record cannot be read at first", unreadable: true, runsOnceReadable: true},
		{name: "recorded, and cannot be read at first", recorded: true, unreadable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client := fake.NewClientset()
				rec := &Record{ConfigMaps: client.CoreV1(), Namespace: "evictionrequest-system", CallTimeout: time.Second}
				if tc.recorded {
					if err := rec.Save(t.Context(), Decision{Manager: upstreamController, Object: "Eviction shop/pod-1-db-0", Written: start}); err != nil {
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
				calls := 0
				g := New(testingclock.NewFakeClock(start), record.NewFakeRecorder(1), rec, func() { calls++ })
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if _, err := Watch(ctx, g); err != nil {
					t.Fatal(err)
				}
				var guarded, actor atomic.Bool
				running := func(ran *atomic.Bool) controllermanager.Controller {
					return controllermanager.RunFunc(func(ctx context.Context) error {
						ran.Store(true)
						<-ctx.Done()
						return nil
					})
				}
				go func() { _ = g.Yielding(running(&guarded)).Run(ctx) }()
				go func() { _ = running(&actor).Run(ctx) }()
				synctest.Wait()
				if guarded.Load() != tc.runs || !actor.Load() {
					t.Errorf("the guarded controller ran: %v, want %v; the actor ran: %v, want true", guarded.Load(), tc.runs, actor.Load())
				}
				if tc.unreadable {
					readable.Store(true)
					time.Sleep(retry.Cap)
					synctest.Wait()
					if guarded.Load() != tc.runsOnceReadable {
						t.Errorf("once the record could be read, the guarded controller ran: %v, want %v", guarded.Load(), tc.runsOnceReadable)
					}
				}
				if stepped := calls == 1; stepped != tc.recorded {
					t.Errorf("the metric's callback was called %d times, want it called once if and only if recorded", calls)
				}
			})
		})
	}
}

// The decision is recorded even when writing it fails at first and the
// term that took it ends meanwhile: the next leader reads it.
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
		g := New(testingclock.NewFakeClock(start), record.NewFakeRecorder(1), rec, nil)
		ctx, cancel := context.WithCancel(t.Context())
		g.Handler(ctx).OnUpdate(written(), written(status(upstreamEvictor, start)))
		synctest.Wait()
		cancel()
		time.Sleep(3 * retry.Cap)
		synctest.Wait()
		if d, err := rec.Load(t.Context()); err != nil || d == nil || d.Manager != upstreamEvictor {
			t.Errorf("recorded %+v (%v), want kube-controller-manager's evictor's write", d, err)
		}
	})
}

// A yielding controller stops when the guard steps aside; a controller
// that does not yield goes on.
func TestYieldingControllersStopWhenTheGuardStepsAside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(testingclock.NewFakeClock(start), record.NewFakeRecorder(1), nil, nil)
		var yieldingStopped, otherStopped bool
		running := func(stopped *bool) controllermanager.Controller {
			return controllermanager.RunFunc(func(ctx context.Context) error {
				<-ctx.Done()
				*stopped = true
				return nil
			})
		}
		ctx, cancel := context.WithCancel(t.Context())
		go func() { _ = g.Yielding(running(&yieldingStopped)).Run(ctx) }()
		go func() { _ = running(&otherStopped).Run(ctx) }()
		synctest.Wait()
		g.Handler(ctx).OnUpdate(written(), written(status(upstreamEvictor, start)))
		synctest.Wait()
		if !yieldingStopped || otherStopped {
			t.Errorf("the yielding controller stopped: %v, the other: %v; want only the yielding one", yieldingStopped, otherStopped)
		}
		cancel()
		synctest.Wait()
	})
}

// Through a cache built as the binary builds it (CacheTransform, which
// strips managedFields but kube-controller-manager's entries), the guard
// still sees kube-controller-manager write, and not this project's
// controllers: were the transform to drop upstream's entries, the guard
// would never step aside.
func TestTheGuardSeesKubeControllerManagerThroughTheBinarysCache(t *testing.T) {
	for _, tc := range []struct {
		name    string
		manager string
		stepped bool
	}{
		{"kube-controller-manager's evictor", upstreamEvictor, true},
		{"this project's controller", lifecycle.FieldManager, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ev := written()
				client := fake.NewClientset(ev)
				factory := cachetest.KubeInformers(client, CacheTransform)
				informer := factory.Lifecycle().V1alpha1().Evictions().Informer()
				// The fake clientset stamps its entries with the bubble's clock.
				g := New(clock.RealClock{}, record.NewFakeRecorder(4), nil, nil)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if _, err := Watch(ctx, g, informer); err != nil {
					t.Fatal(err)
				}
				factory.Start(ctx.Done())
				defer factory.Shutdown()
				synctest.Wait()
				// A server-side apply, as both controllers write: the fake
				// clientset's field manager records the entry.
				apply := lifecycleapply.Eviction(ev.Name, ev.Namespace).WithLabels(map[string]string{"written-by": "test"})
				if _, err := client.LifecycleV1alpha1().Evictions(ev.Namespace).Apply(ctx, apply, metav1.ApplyOptions{FieldManager: tc.manager, Force: true}); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if stepped := g.hasSteppedAside(); stepped != tc.stepped {
					t.Errorf("stepped aside: %v, want %v", stepped, tc.stepped)
				}
				cancel()
			})
		})
	}
}
