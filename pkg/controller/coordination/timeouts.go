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

package coordination

import (
	"sync"
	"time"
)

// lastTurnTimeouts remembers, per request, the deadline its last
// interceptor missed. Such a time-out writes nothing to the request (the
// interceptor stays active while the Eviction API takes over), so without
// it every eviction retry would count and report the time-out again.
type lastTurnTimeouts struct {
	mu     sync.Mutex
	missed map[string]time.Time
}

func newLastTurnTimeouts() *lastTurnTimeouts {
	return &lastTurnTimeouts{missed: map[string]time.Time{}}
}

// first is true the first time the last interceptor of key is seen past
// deadline; a heartbeat that moved the deadline makes a later time-out a
// new one.
func (t *lastTurnTimeouts) first(key string, deadline time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if seen, ok := t.missed[key]; ok && seen.Equal(deadline) {
		return false
	}
	t.missed[key] = deadline
	return true
}

// forget drops what is remembered of key.
func (t *lastTurnTimeouts) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.missed, key)
}

// forget drops what the controller remembers of the request key, which is
// gone or complete: its eviction backoff and its last time-out.
func (c *Controller) forget(key string) {
	c.backoff.Forget(key)
	c.lastTurns.forget(key)
}
