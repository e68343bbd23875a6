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
// turn is next and how a turn ends (the deadline itself is each API's rule:
// pkg/apis/coordination/helper, pkg/api/lifecycle/v1alpha1), what became of
// the target pod, the API-initiated eviction with its backoff and the pods
// it skips, and the reasons of the events. Each controller is an adapter that reads and
// writes its own API's objects around these rules.
package eviction

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Next returns the participant after current in order, the order they
// take their turns in, or the first one when current is "". ok is false
// when no participant follows.
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

// Why says how a turn that ended at deadline ended, for messages:
// "completed", or "missed its heartbeat deadline of <within> (at <deadline>)".
func (e TurnEnd) Why(within time.Duration, deadline time.Time) string {
	if e == TimedOut {
		return fmt.Sprintf("missed its heartbeat deadline of %s (at %s)", within, deadline.UTC().Format(time.RFC3339))
	}
	return "completed"
}

// EventType is the type of the event of a turn that ended so: Normal when
// completed, Warning when timed out.
func (e TurnEnd) EventType() string {
	if e == TimedOut {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// HandOffMessage says that next took over from active, whose turn ended as
// why says; role is "Interceptor" or "Responder".
func HandOffMessage(role, next, active, why string) string {
	return fmt.Sprintf("%s %s replaced %s, which %s.", role, next, active, why)
}

// LastTurnMessage says that the turn of the last participant, active,
// ended as why says.
func LastTurnMessage(role, active, why string) string {
	return fmt.Sprintf("%s %s %s; no %s is left.", role, active, why, strings.ToLower(role))
}
