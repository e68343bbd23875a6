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

package drain

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The annotations of a drain's deadline. On an EvictionRequest (either
// API) the drain that asked for it writes them (Deadline.Annotations):
// DeadlineAnnotation says, in RFC 3339, when the drain stops waiting for
// the interceptors or responders and PodDisruptionBudgets, and
// OnDeadlineAnnotation what it does then (fail, evict or delete), so that
// interceptors can finish, or save what they can, first
// (RequestDeadline). On a Node the declarative drain reads them
// (NodeDeadline), where the deadline may also be a duration from the
// drain's start. Both are read by one parser, ParseDeadline.
const (
	DeadlineAnnotation   = "evictionrequest.coordination.k8s.io/drain-deadline"
	OnDeadlineAnnotation = "evictionrequest.coordination.k8s.io/drain-on-deadline"
)

// RequestAnnotations are the annotations of its requests a drain reads (to
// remove the deadline it announced when it withdraws): a cache of requests
// a drain reads from must keep them.
var RequestAnnotations = []string{DeadlineAnnotation, OnDeadlineAnnotation}

// Escalation is what a drain does when its deadline passes with pods left.
// The zero Escalation is DefaultEscalation.
type Escalation string

const (
	// EscalateFail stops waiting and reports who blocks; the requests
	// stay, so the pods may still leave.
	EscalateFail Escalation = "fail"
	// EscalateEvict evicts the pods left through the Eviction API at
	// once, skipping the interceptors or responders still to come:
	// PodDisruptionBudgets still apply.
	EscalateEvict Escalation = "evict"
	// EscalateDelete deletes the pods left with their own grace period,
	// PodDisruptionBudgets ignored, as kubectl drain --disable-eviction
	// does.
	EscalateDelete Escalation = "delete"

	// DefaultEscalation is what a drain does at its deadline unless told
	// otherwise: it fails, and nothing is evicted behind an interceptor's
	// back.
	DefaultEscalation = EscalateFail
)

// Escalations are the valid escalations, for flag help and validation.
var Escalations = []Escalation{EscalateFail, EscalateEvict, EscalateDelete}

// ParseEscalation reads an escalation's name; empty is DefaultEscalation.
func ParseEscalation(s string) (Escalation, error) {
	if s == "" {
		return DefaultEscalation, nil
	}
	for _, e := range Escalations {
		if string(e) == s {
			return e, nil
		}
	}
	names := make([]string, len(Escalations))
	for i, e := range Escalations {
		names[i] = string(e)
	}
	return DefaultEscalation, fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
}

// OrDefault is e, or DefaultEscalation for the zero Escalation.
func (e Escalation) OrDefault() Escalation {
	if e == "" {
		return DefaultEscalation
	}
	return e
}

// ParseDeadline reads a deadline as an annotation or a flag gives it: a
// positive duration counted from start (such as 30m), or an RFC 3339 time.
// A zero start accepts only a time: that is how a request's annotation is
// read, whose readers do not know when the drain started, and why a drain
// always writes its requests' deadline as a time.
func ParseDeadline(value string, start time.Time) (time.Time, error) {
	if after, err := time.ParseDuration(value); err == nil && !start.IsZero() {
		if after <= 0 {
			return time.Time{}, fmt.Errorf("%q is not a positive duration", value)
		}
		return start.Add(after), nil
	}
	at, err := time.Parse(time.RFC3339, value)
	if err != nil {
		if start.IsZero() {
			return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (such as 2026-01-02T15:04:05Z)", value)
		}
		return time.Time{}, fmt.Errorf("%q is neither a positive duration (such as 30m) nor an RFC 3339 time (such as 2026-01-02T15:04:05Z)", value)
	}
	return at, nil
}

// Deadline is when a drain stops waiting for interceptors, responders and
// PodDisruptionBudgets, and what it does then.
type Deadline struct {
	// At is the deadline; zero is none.
	At time.Time
	// Escalation is what the drain does at At; zero is DefaultEscalation.
	Escalation Escalation
}

// IsSet is true for a drain with a deadline.
func (d Deadline) IsSet() bool {
	return !d.At.IsZero()
}

// Passed is true once now is at or after a set deadline.
func (d Deadline) Passed(now time.Time) bool {
	return d.IsSet() && !now.Before(d.At)
}

// Fails is true when the drain fails at its deadline rather than evicting
// or deleting what is left.
func (d Deadline) Fails() bool {
	return d.Escalation.OrDefault() == EscalateFail
}

// FailedAt is true once a deadline at which the drain fails has passed.
func (d Deadline) FailedAt(now time.Time) bool {
	return d.Fails() && d.Passed(now)
}

// Annotations are the annotations of the drain's requests that tell their
// interceptors or responders the deadline and what happens then.
func (d Deadline) Annotations() map[string]*string {
	at, escalation := d.At.UTC().Format(time.RFC3339), string(d.Escalation.OrDefault())
	return map[string]*string{DeadlineAnnotation: &at, OnDeadlineAnnotation: &escalation}
}

// key names the deadline's value: the drain announces each value once.
func (d Deadline) key() string {
	return d.At.UTC().Format(time.RFC3339) + "/" + string(d.Escalation.OrDefault())
}

// withdrawnAnnotations remove, from a request the drain withdrew from, the
// annotations Annotations wrote.
func withdrawnAnnotations() map[string]*string {
	return map[string]*string{DeadlineAnnotation: nil, OnDeadlineAnnotation: nil}
}

// Left says how long until the deadline, for example "deadline in 4m"
// or "deadline passed 10s ago: evicting".
func (d Deadline) Left(now time.Time) string {
	if !d.IsSet() {
		return ""
	}
	if d.Passed(now) {
		return fmt.Sprintf("deadline passed %s: %s", Ago(now, &d.At), d.Escalation.OrDefault())
	}
	return "deadline " + ETA(now, &d.At)
}

// deadlineFromAnnotations reads the deadline annotations over fallback:
// what is absent or does not parse stays fallback's, and the error says
// what did not parse. start is as ParseDeadline's.
func deadlineFromAnnotations(annotations map[string]string, start time.Time, fallback Deadline) (Deadline, error) {
	d := fallback
	var errs []error
	if value, ok := annotations[OnDeadlineAnnotation]; ok {
		escalation, err := ParseEscalation(value)
		if err != nil {
			errs = append(errs, fmt.Errorf("annotation %s: %w", OnDeadlineAnnotation, err))
		} else {
			d.Escalation = escalation
		}
	}
	if value, ok := annotations[DeadlineAnnotation]; ok {
		at, err := ParseDeadline(value, start)
		if err != nil {
			errs = append(errs, fmt.Errorf("annotation %s: %w", DeadlineAnnotation, err))
		} else {
			d.At = at
		}
	}
	return d, errors.Join(errs...)
}

// NodeDeadline is the deadline of a drain of a Node that started at start:
// the Node's deadline annotations over defaults, which keep what is absent
// or does not parse (the error says what did not).
func NodeDeadline(annotations map[string]string, start time.Time, defaults Deadline) (Deadline, error) {
	return deadlineFromAnnotations(annotations, start, defaults)
}

// RequestDeadline reads the deadline a drain wrote on a request's
// annotations (interceptors call it); ok is false when there is none or its
// time does not parse. An escalation that does not parse is the default.
func RequestDeadline(annotations map[string]string) (d Deadline, ok bool) {
	d, _ = deadlineFromAnnotations(annotations, time.Time{}, Deadline{Escalation: DefaultEscalation})
	return d, d.IsSet()
}
