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
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// drainRun is one run of the drain command: its session and what it last
// reported.
type drainRun struct {
	d           *DrainOptions
	session     *drain.Session
	stopSignals func()
	// last is the latest report; requested is true once the evictions
	// were requested.
	last      drain.Report
	requested bool
	// waves is true when the nodes are drained a few at a time; nodes is
	// what was printed of each node: "started" or "drained".
	waves bool
	nodes map[string]string
}

// printNodes prints and reports each node once it is drained, and, when
// the nodes are drained in waves, once it starts.
func (r *drainRun) printNodes(ctx context.Context, states map[string]drain.NodeState) {
	if r.nodes == nil {
		r.nodes = map[string]string{}
	}
	for _, node := range r.d.Nodes {
		state := states[node]
		switch {
		case state.Done() && r.nodes[node] != "drained":
			r.nodes[node] = "drained"
			fmt.Fprintf(r.d.Out, "node/%s drained\n", node)
			r.d.reportDrained(ctx, node)
		case r.waves && state.Started && !state.Done() && r.nodes[node] == "":
			r.nodes[node] = "started"
			r.d.reportStarted(ctx, node)
			r.d.printer.note(fmt.Sprintf("node/%s: draining, %s left", node, drain.Pods(state.Left)))
		}
	}
}

// follow syncs the session on every change, at most every syncGap, and
// every refreshPeriod, until the nodes are drained or waitCtx ends.
func (r *drainRun) follow(ctx, sigCtx, waitCtx context.Context, changed <-chan struct{}) error {
	pacer := newSyncPacer(changed)
	for {
		report, _ := r.session.Sync(waitCtx)
		if waitCtx.Err() != nil {
			return r.ended(ctx, sigCtx, waitCtx.Err())
		}
		r.last = report
		if !r.requested {
			r.requested = true
			fmt.Fprintf(r.d.Out, "requested the eviction of %s as %s\n", drain.Pods(report.Summary.Total), r.d.requesterName())
		}
		r.d.printer.update(report.Summary, report.Progress, time.Now())
		r.printNodes(ctx, report.Nodes)
		if report.Drained() {
			return nil
		}
		if report.Deadline.FailedAt(time.Now()) {
			return r.deadlineFailed(time.Now())
		}
		if err := pacer.wait(waitCtx); err != nil {
			return r.ended(ctx, sigCtx, err)
		}
	}
}

// requested notes a request that failed, which the session retries, and a
// pod that landed on a node after the drain started.
func (d *DrainOptions) requested(pod *corev1.Pod, late bool, err error) {
	switch {
	case err != nil:
		d.printer.note(fmt.Sprintf("error: requesting the eviction of pod %s/%s (retrying): %v", pod.Namespace, pod.Name, err))
	case late:
		d.printer.note(fmt.Sprintf("pod %s/%s landed on node %s: requested its eviction", pod.Namespace, pod.Name, pod.Spec.NodeName))
	}
}

// ended turns how the drain stopped into the command's error: on an
// interrupt it withdraws the drain's requester first; on a time-out it names
// what blocks each remaining pod.
func (r *drainRun) ended(ctx, sigCtx context.Context, err error) error {
	if sigCtx.Err() != nil && ctx.Err() == nil {
		// The handler stays until the interruption is on the nodes: a
		// second Ctrl-C then stops the withdrawal, not the report.
		r.d.reportInterrupted(ctx)
		r.stopSignals()
		if !r.d.WithdrawOnInterrupt {
			return errors.New("interrupted; the EvictionRequests stay (--withdraw-on-interrupt=false)")
		}
		return fmt.Errorf("interrupted: %s", r.withdraw(ctx))
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if r.session.Tracked() == 0 {
		return fmt.Errorf("timed out after %s before the evictions were requested: %w", r.d.Timeout, err)
	}
	lines := r.remaining(time.Now())
	return fmt.Errorf("timed out after %s waiting for %s:\n%s", r.d.Timeout, drain.Pods(len(lines)), strings.Join(lines, "\n"))
}

// remaining describes, a line each, the pods of the last report that are
// not done.
func (r *drainRun) remaining(now time.Time) []string {
	var lines []string
	for _, p := range r.last.Progress {
		if !p.Done() {
			lines = append(lines, fmt.Sprintf("  pod %s/%s: %s", p.Namespace, p.Name, p.Describe(now)))
		}
	}
	return lines
}

// withdraw withdraws the drain's requester from the requests that are not
// complete, and says how that went.
func (r *drainRun) withdraw(ctx context.Context) string {
	report := r.session.Withdraw(ctx)
	for _, err := range report.ForbiddenErrors {
		fmt.Fprintln(r.d.ErrOut, err)
	}
	msg := fmt.Sprintf("withdrew %s from %d EvictionRequests that were not complete", r.d.requesterName(), report.Withdrawn)
	if report.Forbidden > 0 {
		msg += fmt.Sprintf("; %d cannot be canceled (their interceptor set the cancellation policy to Forbid)", report.Forbidden)
	}
	if len(report.Errors) > 0 {
		failures := make([]string, 0, len(report.Errors))
		for _, err := range report.Errors {
			failures = append(failures, err.Error())
		}
		msg += "; failed for " + strings.Join(failures, "; ")
	}
	return msg
}
