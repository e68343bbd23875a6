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

// Package heartbeat holds the one rule both revisions of KEP-4563 share for
// the turn of an interceptor (coordination.k8s.io) or a responder
// (lifecycle.k8s.io): it is passed over once its heartbeat deadline passes.
// Validation, the controllers and the SDK all read the deadline from here.
package heartbeat

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Deadline is when the active participant is passed over: within after
// its last heartbeat, or after since (when its turn began, or the request
// was created) when it has not sent one.
func Deadline(last *metav1.Time, since metav1.Time, within time.Duration) time.Time {
	if last != nil {
		since = *last
	}
	return since.Add(within)
}
