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
	"fmt"
	"strings"
	"time"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// Escalation is what a drain does when its deadline passes with pods left.
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
)

// Escalations are the valid escalations, for flag help and validation.
var Escalations = []Escalation{EscalateFail, EscalateEvict, EscalateDelete}

// ParseEscalation reads an escalation's name.
func ParseEscalation(s string) (Escalation, error) {
	for _, e := range Escalations {
		if string(e) == s {
			return e, nil
		}
	}
	names := make([]string, len(Escalations))
	for i, e := range Escalations {
		names[i] = string(e)
	}
	return "", fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
}

// Deadline is when a drain stops waiting for interceptors, responders and
// PodDisruptionBudgets, and what it does then.
type Deadline struct {
	// At is the deadline; zero is none.
	At time.Time
	// Escalation is what the drain does at At.
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

// Annotations are the annotations of the drain's requests that tell their
// interceptors or responders the deadline and what happens then.
func (d Deadline) Annotations() map[string]*string {
	at, escalation := d.At.UTC().Format(time.RFC3339), string(d.Escalation)
	return map[string]*string{v1alpha1.DrainDeadlineAnnotation: &at, v1alpha1.DrainOnDeadlineAnnotation: &escalation}
}

// key names the deadline's value: the drain announces each value once.
func (d Deadline) key() string {
	return d.At.UTC().Format(time.RFC3339) + "/" + string(d.Escalation)
}

// withdrawnAnnotations remove, from a request the drain withdrew from, the
// annotations Annotations wrote.
func withdrawnAnnotations() map[string]*string {
	return map[string]*string{v1alpha1.DrainDeadlineAnnotation: nil, v1alpha1.DrainOnDeadlineAnnotation: nil}
}

// Left says how long until the deadline, for example "deadline in 4m"
// or "deadline passed 10s ago: evicting".
func (d Deadline) Left(now time.Time) string {
	if !d.IsSet() {
		return ""
	}
	if d.Passed(now) {
		return fmt.Sprintf("deadline passed %s: %s", Ago(now, &d.At), d.Escalation)
	}
	return "deadline " + ETA(now, &d.At)
}

// RequestDeadline reads the deadline a drain wrote on a request's
// annotations (interceptors call it); ok is false when there is none or it
// does not parse.
func RequestDeadline(annotations map[string]string) (d Deadline, ok bool) {
	at, err := time.Parse(time.RFC3339, annotations[v1alpha1.DrainDeadlineAnnotation])
	if err != nil {
		return Deadline{}, false
	}
	escalation, err := ParseEscalation(annotations[v1alpha1.DrainOnDeadlineAnnotation])
	if err != nil {
		escalation = EscalateFail
	}
	return Deadline{At: at, Escalation: escalation}, true
}
