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
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// finalReportTimeout bounds the report of the conditions of an interrupted
// drain, as kubectl drain --report-node-conditions bounds its own, so that
// a second Ctrl-C is not needed.
const finalReportTimeout = 5 * time.Second

// reportStarted writes DrainInProgress=True and Drained=False on nodes with
// --report-node-conditions, unless already written.
func (d *DrainOptions) reportStarted(ctx context.Context, nodes ...string) {
	d.reportConditions(ctx, d.unreported(nodes, ReasonDrainStarted), true, false, ReasonDrainStarted,
		fmt.Sprintf("kubectl evictionrequest drain requests the eviction of the node's pods as %s.", d.requesterName()))
}

// reportQueued writes that nodes wait for a later wave of a drain of wave
// nodes at once: both conditions False.
func (d *DrainOptions) reportQueued(ctx context.Context, wave int, nodes ...string) {
	state := "cordoned"
	if !d.Cordon {
		state = "not cordoned (--cordon=false)"
	}
	d.reportConditions(ctx, nodes, false, false, ReasonDrainQueued,
		fmt.Sprintf("kubectl evictionrequest drain drains %d nodes at once (--max-concurrent-nodes); this one waits for its wave, %s.", wave, state))
}

// reportDrained writes Drained=True on nodes, drained before the others.
func (d *DrainOptions) reportDrained(ctx context.Context, nodes ...string) {
	d.reportConditions(ctx, d.unreported(nodes, ReasonDrainCompleted), false, true, ReasonDrainCompleted,
		"kubectl evictionrequest drain: no pod is left to evict.")
}

// unreported are those of nodes on which reason is not the last reported.
func (d *DrainOptions) unreported(nodes []string, reason string) []string {
	var out []string
	for _, node := range nodes {
		if d.reported[node] != reason {
			out = append(out, node)
		}
	}
	return out
}

// reportEnded writes how the drain ended on the nodes with
// --report-node-conditions, and returns err, the drain's outcome: Drained
// when it is nil, else Interrupted or Failed, both conditions False.
func (d *DrainOptions) reportEnded(ctx, sigCtx context.Context, err error) error {
	switch {
	case err == nil:
		d.reportDrained(ctx, d.Nodes...)
	case sigCtx.Err() != nil && ctx.Err() == nil:
		d.reportInterrupted(ctx)
	default:
		first, _, _ := strings.Cut(err.Error(), "\n")
		d.reportConditions(ctx, d.unreported(d.Nodes, ReasonDrainCompleted), false, false, ReasonDrainFailed, "kubectl evictionrequest drain failed: "+first)
	}
	return err
}

// reportInterrupted writes, once and within finalReportTimeout, that the
// drain was interrupted: before the withdrawal of its requests, so that a
// second Ctrl-C does not leave DrainInProgress True behind.
func (d *DrainOptions) reportInterrupted(ctx context.Context) {
	if d.interruptReported {
		return
	}
	d.interruptReported = true
	reportCtx, cancel := context.WithTimeout(ctx, finalReportTimeout)
	defer cancel()
	d.reportConditions(reportCtx, d.unreported(d.Nodes, ReasonDrainCompleted), false, false, ReasonDrainInterrupted,
		"kubectl evictionrequest drain was interrupted.")
}

// reportConditions writes the drain's DrainInProgress and Drained
// conditions on nodes, with --report-node-conditions. Failing to report is
// a warning: the drain itself goes on, as with kubectl drain. Nodes drained
// before the drain ended keep Drained=True whatever the end.
func (d *DrainOptions) reportConditions(ctx context.Context, nodes []string, inProgress, drained bool, reason, message string) {
	if !d.ReportNodeConditions {
		return
	}
	if d.reported == nil {
		d.reported = map[string]string{}
	}
	conditions := drain.DrainConditions(inProgress, drained, reason, message)
	for _, node := range nodes {
		d.reported[node] = reason
		callCtx, cancel := context.WithTimeout(ctx, d.Client.CallTimeout)
		// The Node as it is keeps the transition time of a condition whose
		// status does not change.
		current, err := d.kube.CoreV1().Nodes().Get(callCtx, node, metav1.GetOptions{})
		if err == nil {
			_, err = drain.SetNodeConditions(callCtx, d.kube.CoreV1(), node, current, time.Now(), fieldManager, conditions...)
		}
		cancel()
		if err != nil {
			fmt.Fprintf(d.ErrOut, "warning: reporting the drain's conditions on node %s: %v\n", node, err)
		}
	}
}
