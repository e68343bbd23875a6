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

package evictionrequest

import (
	"time"

	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
)

// evictionBackoff is the shared eviction.Backoff under the names the
// controller's tests know it by.
type evictionBackoff struct {
	*eviction.Backoff
}

func newEvictionBackoff() *evictionBackoff {
	return &evictionBackoff{eviction.NewBackoff()}
}

func (b *evictionBackoff) wait(key string, now time.Time) time.Duration { return b.Wait(key, now) }

func (b *evictionBackoff) failed(key string, now time.Time, retryAfter time.Duration) time.Duration {
	return b.Failed(key, now, retryAfter)
}

func (b *evictionBackoff) forget(key string) { b.Forget(key) }
