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

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	plugin "github.com/evictionrequest/apiserver/cmd/kubectl-evictionrequest/app"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// A drain held by an interceptor that never answers escalates at its
// deadline as --on-deadline says: fail stops and names the interceptor,
// evict evicts through the Eviction API (a PodDisruptionBudget still
// refuses, and the drain says so), delete deletes despite the budget. The
// request carries the deadline for its interceptors.
func TestPluginDrainEscalatesAtItsDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, onDeadline string
		budget           bool
		gone             bool
		stderr           string
	}{
		{"fail", "fail", false, false, "the drain's deadline (5s) passed with 1 pod left:"},
		{"evict", "evict", false, true, ""},
		{"evict refused by a budget", "evict", true, false, "deadline passed: eviction refused: Cannot evict pod as it would violate the pod's disruption budget"},
		{"delete despite a budget", "delete", true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			ns := f.NewNamespace(t)
			node := f.NewNode(t)
			pod := f.CreatePod(t, ns, "db-0", framework.PodOptions{Node: node, Interceptors: []string{parkedInterceptor}, Labels: map[string]string{"app": "db"}})
			if tc.budget {
				f.CreatePDB(t, ns, "db", 1, 1)
			}
			r := f.RunCommand(t, 2*time.Minute, pluginBinary, "drain", node, "--force", "--deadline=5s", "--on-deadline="+tc.onDeadline, "--timeout=30s")
			if tc.gone != (r.Err == nil) {
				t.Fatalf("the drain: %v, want it to succeed: %v\n%s%s", r.Err, tc.gone, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "deadline in 5s") || !strings.Contains(r.Stderr+r.Stdout, tc.stderr) {
				t.Errorf("output lacks the deadline or %q:\n%s%s", tc.stderr, r.Stdout, r.Stderr)
			}
			if tc.gone {
				f.WaitForPodGone(t, ns, pod.Name)
				return
			}
			if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
				t.Errorf("pod %s after the drain: %v", pod.Name, err)
			}
			er, err := f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if at, escalation := er.Annotations[drain.DeadlineAnnotation], er.Annotations[drain.OnDeadlineAnnotation]; at == "" || escalation != tc.onDeadline {
				t.Errorf("the request's annotations %v lack the deadline for its interceptors", er.Annotations)
			}
			if tc.onDeadline == "fail" && !strings.Contains(r.Stderr, fmt.Sprintf("interceptor %s is active", parkedInterceptor)) {
				t.Errorf("the failed drain does not name who blocks:\n%s", r.Stderr)
			}
		})
	}
}

// A pool drained a node at a time (--max-concurrent-nodes=1): each node
// starts only once the one before it is drained, in name order, and all
// end drained; with --report-node-conditions the nodes of later waves are
// queued on the Node, never more than one draining.
func TestPluginDrainsAPoolInWaves(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	nodes := []string{f.PoolNode(t, ns), f.PoolNode(t, ns), f.PoolNode(t, ns)}
	slices.Sort(nodes)
	for i, node := range nodes {
		f.CreatePod(t, ns, fmt.Sprintf("web-%d", i), framework.PodOptions{Node: node})
	}
	seen := f.WatchPoolDrains(t, ns)
	r := f.RunCommand(t, 2*time.Minute, pluginBinary, "drain", "-l", framework.PoolLabel+"="+ns, "--force", "--max-concurrent-nodes=1", "--timeout=90s", "--report-node-conditions")
	if r.Err != nil {
		t.Fatalf("the drain: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	for _, node := range nodes {
		f.WaitForNode(t, node, "Drained=True", framework.NodeConditionIs(corev1.NodeDrained, corev1.ConditionTrue, plugin.ReasonDrainCompleted, ""))
	}
	if got := seen(); got.MaxDraining != 1 || !got.Queued[nodes[1]] || !got.Queued[nodes[2]] {
		t.Errorf("on the Nodes: at most %d draining at once, queued %v; want 1, and the later waves' %v queued", got.MaxDraining, got.Queued, nodes[1:])
	}
	// What it printed of the nodes, in order: a node starts after the one
	// before it is drained.
	var got []string
	for _, line := range strings.Split(r.Stdout, "\n") {
		for _, node := range nodes {
			switch {
			case strings.HasPrefix(line, "node/"+node+": draining"):
				got = append(got, "start "+node)
			case line == "node/"+node+" drained":
				got = append(got, "drained "+node)
			}
		}
	}
	var want []string
	for _, node := range nodes {
		want = append(want, "start "+node, "drained "+node)
	}
	if !slices.Equal(got, want) || !strings.Contains(r.Stdout, "draining 1 of 3 nodes at once") {
		t.Errorf("nodes in the output %v, want %v:\n%s", got, want, r.Stdout)
	}
}

// In a namespace under the eviction API bridge, the plugin's escalation
// at its deadline evicts a pod whose interceptor never answers, as a
// caller that may delete it; a user who may only evict cannot skip the
// interceptor by asking the same way.
func TestPluginDrainEscalatesThroughTheBridge(t *testing.T) {
	t.Parallel()
	f.CheckPluginEscalationThroughTheBridge(t, pluginBinary, framework.PodOptions{Interceptors: []string{parkedInterceptor}})
}
