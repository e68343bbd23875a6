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

package app

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// signalEvery signals changed every period until ctx ends, as the informers
// of a busy drain do, without ever blocking.
func signalEvery(ctx context.Context, changed chan<- struct{}, period time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	}
}

func TestSyncPacerFoldsABurstOfChangesIntoASyncPerGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		changed := make(chan struct{}, 1)
		ctx, stop := context.WithTimeout(t.Context(), 2*time.Second)
		defer stop()
		go signalEvery(ctx, changed, 5*time.Millisecond)
		pacer := newSyncPacer(changed)
		syncs := 0
		for pacer.wait(ctx) == nil {
			syncs++
		}
		// 400 changes in 2 s; one Sync per gap of 200 ms at most, and one
		// at every gap while changes keep coming.
		if want := int(2 * time.Second / syncGap); syncs < want-1 || syncs > want {
			t.Errorf("%d Syncs in 2s of changes every 5ms, want about %d (one per %s)", syncs, want, syncGap)
		}
	})
}

func TestSyncPacerSyncsAtOnceAtAChangeAfterAQuietGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		changed := make(chan struct{}, 1)
		pacer := newSyncPacer(changed)
		time.Sleep(syncGap + 50*time.Millisecond)
		start := time.Now()
		changed <- struct{}{}
		if err := pacer.wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("a change %s after the last Sync waited %s, want a Sync at once", syncGap+50*time.Millisecond, waited)
		}
	})
}

func TestSyncPacerRefreshesWhenNothingChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pacer := newSyncPacer(make(chan struct{}))
		start := time.Now()
		if err := pacer.wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != refreshPeriod {
			t.Errorf("without changes the next Sync came after %s, want the refresh period %s", waited, refreshPeriod)
		}
	})
}

func TestSyncPacerStopsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		changed := make(chan struct{}, 1)
		pacer := newSyncPacer(changed)
		ctx, cancel := context.WithTimeout(t.Context(), syncGap/2)
		defer cancel()
		changed <- struct{}{}
		if err := pacer.wait(ctx); err != context.DeadlineExceeded {
			t.Errorf("wait returned %v when its context ended within the gap, want %v", err, context.DeadlineExceeded)
		}
	})
}
