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

package apiserver

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// releasingRun is a run of controllers that, once its context ends, takes
// releaseTakes to give its Lease up, and records that it did.
func releasingRun(released *atomic.Bool, releaseTakes time.Duration) func(context.Context) {
	return func(ctx context.Context) {
		<-ctx.Done()
		time.Sleep(releaseTakes)
		released.Store(true)
	}
}

// The pre-shutdown hook returns only once the controllers gave their Lease
// up, so the process cannot exit before the next leader can take it.
func TestStopWaitsForTheControllersToGiveTheirLeaseUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released atomic.Bool
		run := &controllersRun{}
		run.start(t.Context(), releasingRun(&released, 3*time.Second))
		if err := run.stop(15 * time.Second); err != nil {
			t.Fatalf("stop: %v", err)
		}
		if !released.Load() {
			t.Error("stop returned before the controllers gave their Lease up")
		}
	})
}

// Controllers slower to stop than the timeout do not hold the shutdown
// up: stop says so once the timeout passed, not later.
func TestStopGivesUpOnControllersSlowerThanItsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released atomic.Bool
		run := &controllersRun{}
		run.start(t.Context(), releasingRun(&released, time.Minute))
		began := time.Now()
		if err := run.stop(15 * time.Second); err == nil {
			t.Error("stop said the controllers stopped, want an error after its timeout")
		}
		if waited := time.Since(began); waited != 15*time.Second {
			t.Errorf("stop waited %s, want 15s", waited)
		}
		synctest.Wait()
		if released.Load() {
			t.Error("the controllers gave their Lease up within 15s, want a minute")
		}
		time.Sleep(time.Minute) // let the run end before the bubble does
	})
}

// A server stopped before its post-start hook ran never starts its
// controllers, and stopping it waits for nothing.
func TestControllersStoppedBeforeTheyStartNeverStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		run := &controllersRun{}
		if err := run.stop(15 * time.Second); err != nil {
			t.Fatalf("stop with nothing running: %v", err)
		}
		var started atomic.Bool
		run.start(t.Context(), func(context.Context) { started.Store(true) })
		synctest.Wait()
		if started.Load() {
			t.Error("controllers started after the server was stopped")
		}
	})
}

// The controllers stop with the server's own context too, as they did
// before the pre-shutdown hook existed.
func TestControllersStopWithTheServersContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released atomic.Bool
		ctx, cancel := context.WithCancel(t.Context())
		run := &controllersRun{}
		run.start(ctx, releasingRun(&released, time.Second))
		cancel()
		time.Sleep(2 * time.Second)
		if !released.Load() {
			t.Error("the controllers ran on after the server's context ended")
		}
	})
}
