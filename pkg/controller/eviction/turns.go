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

// Package eviction holds the steps of an eviction that the controllers of
// both EvictionRequest APIs take, so that neither copies the other: whose
// turn is next and when a turn times out, what became of the target pod,
// the API-initiated eviction with its backoff and the pods it skips, and
// the reasons of the events. Each controller is an adapter that reads and
// writes its own API's objects around these rules.
package eviction

import (
	"time"
)

// Next returns the participant after current in order, the order they
// take their turns in; first is true when current is "" and the first one
// is returned. ok is false when no participant follows.
func Next(order []string, current string) (next string, ok bool) {
	if current == "" {
		if len(order) == 0 {
			return "", false
		}
		return order[0], true
	}
	for i, name := range order {
		if name == current && i+1 < len(order) {
			return order[i+1], true
		}
	}
	return "", false
}

// Deadline is when the active participant is passed over: within after its
// last heartbeat, or after since (when it was made active, or the request
// created) when it has not sent one.
func Deadline(heartbeat *time.Time, since time.Time, within time.Duration) time.Time {
	if heartbeat != nil {
		since = *heartbeat
	}
	return since.Add(within)
}

// TurnEnd is how the active participant's turn ends.
type TurnEnd int

const (
	// Waiting: the turn goes on; look again at the deadline.
	Waiting TurnEnd = iota
	// Completed: the participant said it is done.
	Completed
	// TimedOut: the participant missed its deadline.
	TimedOut
)

// Judge says whether the turn of the active participant is over at now:
// completed by it, or timed out at deadline.
func Judge(completed bool, deadline, now time.Time) TurnEnd {
	switch {
	case completed:
		return Completed
	case !now.Before(deadline):
		return TimedOut
	}
	return Waiting
}

// UntilOrNow is how long until t, at least a moment, so that a deadline
// already passed is looked at again right away.
func UntilOrNow(t, now time.Time) time.Duration {
	if d := t.Sub(now); d > 0 {
		return d
	}
	return time.Millisecond
}
