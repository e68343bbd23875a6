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
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// With --report-node-conditions the drain writes Kubernetes' node lifecycle
// conditions at its start and at its end, however it ends; without it,
// nothing.
func TestDrainReportsNodeConditions(t *testing.T) {
	timedOut := errors.New("timed out after 25s waiting for 1 pod:\n  pod shop/db-0: Intercepted")
	for _, tc := range []struct {
		name        string
		err         error
		interrupted bool
		inProgress  corev1.ConditionStatus
		drained     corev1.ConditionStatus
		reason      string
		message     string
	}{
		{"completed", nil, false, corev1.ConditionFalse, corev1.ConditionTrue, ReasonDrainCompleted, "no pod is left"},
		{"timed out", timedOut, false, corev1.ConditionFalse, corev1.ConditionFalse, ReasonDrainFailed, "failed: timed out after 25s waiting for 1 pod:"},
		{"interrupted", errors.New("interrupted: withdrew"), true, corev1.ConditionFalse, corev1.ConditionFalse, ReasonDrainInterrupted, "interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, _, _ := testOptions(t, []runtime.Object{wrappers.MakeNode("node-a").Obj()}, nil)
			d := &DrainOptions{Options: o, Nodes: []string{"node-a"}, ReportNodeConditions: true}
			ctx := t.Context()
			d.reportStarted(ctx, d.Nodes...)
			node := getNode(t, d)
			if c := drain.FindNodeCondition(node, corev1.NodeDrainInProgress); c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonDrainStarted {
				t.Errorf("DrainInProgress at the start = %+v", c)
			}

			sigCtx, cancel := context.WithCancel(ctx)
			if tc.interrupted {
				cancel()
			}
			defer cancel()
			if err := d.reportEnded(ctx, sigCtx, tc.err); err != tc.err {
				t.Errorf("reportEnded returned %v, want the drain's outcome %v", err, tc.err)
			}
			node = getNode(t, d)
			inProgress, drained := drain.FindNodeCondition(node, corev1.NodeDrainInProgress), drain.FindNodeCondition(node, corev1.NodeDrained)
			if inProgress == nil || drained == nil || inProgress.Status != tc.inProgress || drained.Status != tc.drained || inProgress.Reason != tc.reason || !strings.Contains(inProgress.Message, tc.message) {
				t.Errorf("conditions at the end: DrainInProgress %+v, Drained %+v; want %s, %s, reason %s, message with %q", inProgress, drained, tc.inProgress, tc.drained, tc.reason, tc.message)
			}
			if strings.Contains(inProgress.Message, "pod shop/db-0") {
				t.Errorf("the message %q holds more than the error's first line", inProgress.Message)
			}
		})
	}

	o, _, kube, _ := testOptions(t, []runtime.Object{wrappers.MakeNode("node-a").Obj()}, nil)
	d := &DrainOptions{Options: o, Nodes: []string{"node-a"}}
	d.reportStarted(t.Context(), d.Nodes...)
	_ = d.reportEnded(t.Context(), t.Context(), nil)
	if got := writes(kube); len(got) != 0 {
		t.Errorf("without --report-node-conditions the drain wrote %v", got)
	}
}

// In waves, the nodes of later waves are reported queued until they start,
// and a node drained before the others is reported Drained at once and
// stays so when the drain then fails.
func TestDrainInWavesReportsEachNode(t *testing.T) {
	names := []string{"node-a", "node-b", "node-c"}
	var nodes []runtime.Object
	for _, name := range names {
		nodes = append(nodes, wrappers.MakeNode(name).Obj())
	}
	o, _, _, _ := testOptions(t, nodes, nil)
	d := &DrainOptions{Options: o, Nodes: names, ReportNodeConditions: true, printer: newPrinter("lines", io.Discard)}
	ctx := t.Context()
	d.reportStarted(ctx, "node-a")
	d.reportQueued(ctx, 1, "node-b", "node-c")
	want := func(name string, inProgress, drained corev1.ConditionStatus, reason string) {
		t.Helper()
		node, err := d.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, c := drain.FindNodeCondition(node, corev1.NodeDrainInProgress), drain.FindNodeCondition(node, corev1.NodeDrained)
		if p == nil || c == nil || p.Status != inProgress || c.Status != drained || p.Reason != reason {
			t.Errorf("%s: DrainInProgress %+v, Drained %+v; want %s, %s, reason %s", name, p, c, inProgress, drained, reason)
		}
	}
	want("node-b", corev1.ConditionFalse, corev1.ConditionFalse, ReasonDrainQueued)

	run := &drainRun{d: d, waves: true}
	run.printNodes(ctx, map[string]drain.NodeState{"node-a": {Started: true}, "node-b": {Started: true, Left: 2}, "node-c": {}})
	want("node-a", corev1.ConditionFalse, corev1.ConditionTrue, ReasonDrainCompleted)
	want("node-b", corev1.ConditionTrue, corev1.ConditionFalse, ReasonDrainStarted)
	want("node-c", corev1.ConditionFalse, corev1.ConditionFalse, ReasonDrainQueued)

	_ = d.reportEnded(ctx, ctx, errors.New("timed out"))
	want("node-a", corev1.ConditionFalse, corev1.ConditionTrue, ReasonDrainCompleted)
	want("node-b", corev1.ConditionFalse, corev1.ConditionFalse, ReasonDrainFailed)
	want("node-c", corev1.ConditionFalse, corev1.ConditionFalse, ReasonDrainFailed)
}

// A drain whose conditions cannot be written warns and goes on.
func TestDrainThatCannotReportWarns(t *testing.T) {
	o, out, kube, _ := testOptions(t, []runtime.Object{wrappers.MakeNode("node-a").Obj()}, nil)
	kube.PrependReactor("patch", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`nodes "node-a" is forbidden: cannot patch resource "nodes/status"`)
	})
	d := &DrainOptions{Options: o, Nodes: []string{"node-a"}, ReportNodeConditions: true}
	d.reportStarted(t.Context(), d.Nodes...)
	if got := out.String(); !strings.Contains(got, "warning: reporting the drain's conditions on node node-a:") {
		t.Errorf("output %q, want a warning", got)
	}
}

func getNode(t *testing.T, d *DrainOptions) *corev1.Node {
	t.Helper()
	node, err := d.kube.CoreV1().Nodes().Get(t.Context(), "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return node
}
