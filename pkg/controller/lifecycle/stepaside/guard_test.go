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
	"strings"
	"testing"
	"testing/synctest"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

var start = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// written is an Eviction whose status manager wrote at.
func written(manager string, at time.Time) *lifecyclev1alpha1.Eviction {
	return &lifecyclev1alpha1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pod-1-db-0",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", Time: &metav1.Time{Time: at}}}}}
}

// The guard steps aside at a write of kube-controller-manager's controllers
// since it started, once, with an event and the metric's callback; not at
// its own controllers' writes, and not at writes from before it started: a
// kube-controller-manager that handed its objects over and stopped, or an
// earlier version of this project (which used upstream's field manager).
func TestTheGuardStepsAsideForKubeControllerManagersWrites(t *testing.T) {
	for _, tc := range []struct {
		name    string
		obj     *lifecyclev1alpha1.Eviction
		stepped bool
	}{
		{"kube-controller-manager's evictor", written("imperative-eviction-responder-controller", start.Add(time.Second)), true},
		{"kube-controller-manager's controller, a second after the guard started", written("evictionrequest-controller", start.Add(time.Second)), true},
		{"a write in the second the guard started", written("imperative-eviction-responder-controller", start), false},
		{"its controller before the guard started", written("evictionrequest-controller", start.Add(-30*time.Second)), false},
		{"its evictor before the guard started", written("imperative-eviction-responder-controller", start.Add(-time.Second)), false},
		{"this project's controller", written(lifecycle.FieldManager, start.Add(time.Second)), false},
		{"this project's evictor", written(evictor.FieldManager, start.Add(time.Second)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(start)
			recorder := record.NewFakeRecorder(4)
			calls := 0
			g := New(clk, recorder, func() { calls++ })
			clk.Step(5 * time.Second)
			g.Observe(t.Context(), tc.obj)
			g.Observe(t.Context(), tc.obj)
			select {
			case <-g.SteppedAside():
				if !tc.stepped {
					t.Fatal("stepped aside")
				}
			default:
				if tc.stepped {
					t.Fatal("did not step aside")
				}
				return
			}
			if calls != 1 || len(recorder.Events) != 1 {
				t.Errorf("%d calls and %d events, want one of each", calls, len(recorder.Events))
			}
			if event := <-recorder.Events; !strings.Contains(event, EventStepAside) {
				t.Errorf("event %q, want %s", event, EventStepAside)
			}
		})
	}
}

// A yielding controller stops when the guard steps aside; a controller
// that does not yield goes on.
func TestYieldingControllersStopWhenTheGuardStepsAside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(testingclock.NewFakeClock(start), record.NewFakeRecorder(1), nil)
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
		g.Observe(ctx, written("imperative-eviction-responder-controller", start.Add(time.Second)))
		synctest.Wait()
		if !yieldingStopped || otherStopped {
			t.Errorf("the yielding controller stopped: %v, the other: %v; want only the yielding one", yieldingStopped, otherStopped)
		}
		cancel()
		synctest.Wait()
	})
}
