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

	"k8s.io/apimachinery/pkg/util/duration"
)

// Blocker says in one line what a pod that is not done waits for, for
// example "interceptor a.example.com is active, last heartbeat 5s ago".
func (p PodProgress) Blocker(now time.Time) string {
	switch p.State {
	case StateIntercepted:
		heartbeat := "no heartbeat yet"
		if p.Request.LastHeartbeat != nil {
			heartbeat = "last heartbeat " + Ago(now, p.Request.LastHeartbeat)
		}
		s := fmt.Sprintf("interceptor %s is active, %s", p.Request.ActiveInterceptor, heartbeat)
		if p.Request.ExpectedFinish != nil {
			s += ", expects to finish " + ETA(now, p.Request.ExpectedFinish)
		}
		return s
	case StateBlocked:
		if len(p.BlockingPDBs) > 0 {
			return fmt.Sprintf("the eviction was refused %s: PodDisruptionBudget %s allows no disruption", times(p.Request.FailedEvictions), strings.Join(p.BlockingPDBs, ", "))
		}
		return fmt.Sprintf("the eviction was refused %s", times(p.Request.FailedEvictions))
	case StateEvicting:
		return "being evicted through the Eviction API"
	case StateTerminating:
		return "terminating"
	case StateCanceled:
		return "its EvictionRequest was canceled"
	case StateGone:
		if !p.Done() {
			return "gone; its EvictionRequest is completing"
		}
		return "gone"
	}
	return "waiting for the eviction request controller"
}

// Describe is the state of a pod in one line, with what it waits for and
// the request's message, for example
// "Blocked: the eviction was refused once: ...".
func (p PodProgress) Describe(now time.Time) string {
	var s string
	switch p.State {
	case StateIntercepted, StateBlocked:
		s = fmt.Sprintf("%s: %s%s", p.State, p.Blocker(now), messageSuffix(p.Request.Message))
	case StateEvicting, StateCanceled:
		s = fmt.Sprintf("%s%s", p.State, messageSuffix(p.Request.Message))
	default:
		s = string(p.State)
	}
	if e := p.DescribeEscalation(); e != "" && !p.Done() {
		s += " (" + e + ")"
	}
	return s
}

// DescribeEscalation says how the drain escalated the pod past its
// deadline, for example "deadline passed: evicted through the Eviction
// API" or "deadline passed: eviction refused: ..."; empty when it did not.
func (p PodProgress) DescribeEscalation() string {
	switch {
	case p.Escalation == "":
		return ""
	case p.EscalationError != "" && p.Escalation == EscalateDelete:
		return "deadline passed: deletion failed: " + Truncate(p.EscalationError, 200)
	case p.EscalationError != "":
		return "deadline passed: eviction refused: " + Truncate(p.EscalationError, 200)
	case p.Escalation == EscalateDelete:
		return "deadline passed: deleted, PodDisruptionBudgets ignored"
	}
	return "deadline passed: evicted through the Eviction API, skipping the interceptors left"
}

func messageSuffix(message string) string {
	if message == "" {
		return ""
	}
	return ": " + Truncate(message, 200)
}

// Ago says how long before now t was, as kubectl prints ages: "5s ago".
func Ago(now time.Time, t *time.Time) string {
	if t == nil {
		return "-"
	}
	return duration.HumanDuration(now.Sub(*t)) + " ago"
}

// ETA says when t comes, relative to now: "in 2m", or "overdue by 10s".
func ETA(now time.Time, t *time.Time) string {
	if t == nil {
		return "-"
	}
	if d := t.Sub(now); d > 0 {
		return "in " + duration.HumanDuration(d)
	}
	return "overdue by " + duration.HumanDuration(now.Sub(*t))
}

// Truncate shortens s to at most n runes on one line, ending it with an
// ellipsis when it cuts.
func Truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		if n < 1 {
			return ""
		}
		return string(r[:n-1]) + "…"
	}
	return s
}

func times(n int32) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
