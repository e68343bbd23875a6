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
	"time"
)

// syncGap is the least time between two Syncs of a drain. Draining a node
// changes its pods, requests and Evictions thousands of times, and a Sync
// reads every pod of the drain: synced at each change, the plugin took a
// fifth of a two-core control plane's CPU in a drain of 500 pods (see
// docs/benchmarks.md). A change in the gap is folded into the Sync at its
// end, so the report is at most this late.
const syncGap = 200 * time.Millisecond

// syncPacer says when a drain syncs next: at a change, no sooner than
// syncGap after the last Sync, or refreshPeriod after it when nothing
// changed.
type syncPacer struct {
	changed <-chan struct{}
	last    time.Time
}

func newSyncPacer(changed <-chan struct{}) *syncPacer {
	return &syncPacer{changed: changed, last: time.Now()}
}

// wait returns when the next Sync is due, or ctx's error once it ends.
func (p *syncPacer) wait(ctx context.Context) error {
	refresh := time.NewTimer(time.Until(p.last.Add(refreshPeriod)))
	defer refresh.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-refresh.C:
	case <-p.changed:
		if err := p.sleepOutTheGap(ctx); err != nil {
			return err
		}
	}
	p.last = time.Now()
	return nil
}

// sleepOutTheGap waits until syncGap has passed since the last Sync; the
// changes signalled meanwhile are all seen by the Sync that follows.
func (p *syncPacer) sleepOutTheGap(ctx context.Context) error {
	rest := time.Until(p.last.Add(syncGap))
	if rest <= 0 {
		return nil
	}
	timer := time.NewTimer(rest)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
	}
	select {
	case <-p.changed:
	default:
	}
	return nil
}
