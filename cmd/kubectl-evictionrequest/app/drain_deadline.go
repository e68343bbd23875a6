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
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// deadlineFlags are the drain's deadline and what it does then.
type deadlineFlags struct {
	// Deadline, when positive, is how long after its start the drain stops
	// waiting for interceptors and PodDisruptionBudgets.
	Deadline time.Duration
	// OnDeadline is what it does then; the zero value is the default,
	// fail.
	OnDeadline drain.Escalation
}

func (f *deadlineFlags) addDeadlineFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&f.Deadline, "deadline", 0,
		"How long the drain waits for interceptors and PodDisruptionBudgets before --on-deadline; 0 waits as long as they take (or --timeout). "+
			"The requests carry the deadline (annotations "+drain.DeadlineAnnotation+" and drain-on-deadline), so interceptors can finish first.")
	fs.Var(&f.OnDeadline, "on-deadline",
		"What the drain does at --deadline with pods left: fail (the default: stop and name who blocks; the requests stay), "+
			"evict (evict the pods left through the Eviction API, skipping the interceptors left; PodDisruptionBudgets still apply) or "+
			"delete (delete the pods left with their grace period, PodDisruptionBudgets ignored, as kubectl drain --disable-eviction).")
}

// validateDeadline checks the deadline flags against the drain's timeout.
func (f *deadlineFlags) validateDeadline(timeout time.Duration) error {
	if f.Deadline < 0 {
		return fmt.Errorf("--deadline must not be negative")
	}
	if f.OnDeadline != "" && f.Deadline == 0 {
		return fmt.Errorf("--on-deadline needs --deadline")
	}
	if f.Deadline > 0 && timeout > 0 && f.Deadline >= timeout {
		return fmt.Errorf("--deadline (%s) must be shorter than --timeout (%s), which gives up", f.Deadline, timeout)
	}
	return nil
}

// setDeadline sets the session's deadline, counted from start, and says it.
func (d *DrainOptions) setDeadline(session *drain.Session, start time.Time) {
	if d.Deadline <= 0 {
		return
	}
	deadline := drain.Deadline{At: start.Add(d.Deadline), Escalation: d.OnDeadline.OrDefault()}
	session.SetDeadline(deadline)
	d.printer.setDeadline(deadline)
	d.printer.note(fmt.Sprintf("deadline in %s (%s): then %s", d.Deadline, deadline.At.Format(time.RFC3339), describeEscalation(deadline.Escalation)))
}

func describeEscalation(e drain.Escalation) string {
	switch e {
	case drain.EscalateEvict:
		return "evict the pods left through the Eviction API, skipping their interceptors"
	case drain.EscalateDelete:
		return "delete the pods left, PodDisruptionBudgets ignored"
	}
	return "fail, naming who blocks"
}

// escalated prints a pod's escalation past the deadline.
func (d *DrainOptions) escalated(p drain.PodProgress) {
	d.printer.note(fmt.Sprintf("pod %s/%s: %s", p.Namespace, p.Name, p.DescribeEscalation()))
}

// deadlineFailed is the error of a drain whose deadline passed with
// --on-deadline=fail, naming what blocks each pod left.
func (r *drainRun) deadlineFailed(now time.Time) error {
	lines := r.remaining(now)
	return fmt.Errorf("the drain's deadline (%s) passed with %s left:\n%s", r.d.Deadline, drain.Pods(len(lines)), strings.Join(lines, "\n"))
}
