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

package eviction

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

const (
	// evictionBackoffBase is the wait after the first failed eviction; it
	// doubles with every further failure.
	evictionBackoffBase = time.Second
	// evictionBackoffMax caps the wait between evictions, as the KEP asks:
	// about 15 minutes.
	evictionBackoffMax = 15 * time.Minute
	// ExpectationTimeout is how long a granted eviction keeps the pod from
	// being evicted again while the pod cache has not yet seen it
	// terminate; after that the eviction is retried.
	ExpectationTimeout = time.Minute
)

// Backoff spaces out the API-initiated evictions of each request: status
// updates wake a controller far more often than it may evict, after a
// failed eviction and after a granted one alike.
type Backoff struct {
	mu        sync.Mutex
	failures  workqueue.TypedRateLimiter[string]
	notBefore map[string]time.Time
	// granted are the keys whose last eviction the API granted.
	granted map[string]bool
	// terminating is, for each key whose pod terminates, when this
	// process learnt it: the grant of its eviction, or the first sync
	// that saw the pod terminating. The controller's own clock, not the
	// pod's timestamps: kube-apiserver's have a second's precision and
	// another clock.
	terminating map[string]time.Time
}

// NewBackoff returns a backoff of one second, doubling up to about 15
// minutes, as the KEP asks.
func NewBackoff() *Backoff {
	return NewBackoffBetween(evictionBackoffBase, evictionBackoffMax)
}

// NewBackoffBetween returns a backoff of base, doubling up to max: the
// default evictor of lifecycle.k8s.io uses the upstream pull request's.
func NewBackoffBetween(base, max time.Duration) *Backoff {
	return &Backoff{
		failures:    workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, max),
		notBefore:   map[string]time.Time{},
		granted:     map[string]bool{},
		terminating: map[string]time.Time{},
	}
}

// Wait returns how long the request key must still wait before its next
// eviction, zero when it may evict now.
func (b *Backoff) Wait(key string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.notBefore[key]; ok && now.Before(t) {
		return t.Sub(now)
	}
	return 0
}

// Failed records a failed eviction of key and returns the wait before the
// next one: exponential in the failures, and never shorter than the
// Retry-After the API server asked for.
func (b *Backoff) Failed(key string, now time.Time, retryAfter time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.granted, key)
	delete(b.terminating, key)
	delay := b.failures.When(key)
	if retryAfter > delay {
		delay = retryAfter
	}
	b.notBefore[key] = now.Add(delay)
	return delay
}

// Succeeded records a granted eviction of key: a change of the request
// (a participant's write) may wake the controller before the pod cache
// shows the pod terminating, and that sync must not evict the pod a second
// time.
func (b *Backoff) Succeeded(key string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures.Forget(key)
	b.notBefore[key] = now.Add(ExpectationTimeout)
	b.granted[key] = true
	b.terminating[key] = now
}

// Granted is true when the last eviction of key was granted (and not
// forgotten since).
func (b *Backoff) Granted(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.granted[key]
}

// Started records that the pod of key is terminating, seen at now: no
// eviction is due any more, but whether the last one was granted stays
// known until Forget, so that every later sync of the terminating pod
// still says whose eviction started it. It returns how long ago this
// process learnt the pod terminates (its grant, or the first sync that saw
// it terminating).
func (b *Backoff) Started(key string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures.Forget(key)
	delete(b.notBefore, key)
	since, ok := b.terminating[key]
	if !ok {
		since = now
		b.terminating[key] = now
	}
	return now.Sub(since)
}

// Forget drops the backoff of key: its eviction succeeded, or is no longer
// due because a participant answered or the request completed.
func (b *Backoff) Forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures.Forget(key)
	delete(b.notBefore, key)
	delete(b.granted, key)
	delete(b.terminating, key)
}
