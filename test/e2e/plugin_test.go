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
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	plugin "github.com/evictionrequest/apiserver/cmd/kubectl-evictionrequest/app"
	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	drainpkg "github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

const pluginBinary = "kubectl-evictionrequest"

// TestPluginDrainsANode drains a node with ten pods through the plugin
// binary: eight get requests (two with SDK interceptors, one of which works
// with heartbeats and an ETA while the other declines, and one under a
// PodDisruptionBudget relaxed midway), a DaemonSet pod and a mirror pod are
// skipped.
func TestPluginDrainsANode(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	const (
		migrator = "migrator.e2e.example.com"
		decliner = "decliner.e2e.example.com"
	)
	f.StartInterceptor(t, ns, migrator, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		for i := 1; i <= 3; i++ {
			finish := time.Now().Add(time.Duration(4-i) * 2 * time.Second)
			if err := req.Report(ctx, interceptor.Progress{Message: fmt.Sprintf("copying volume %d of 3", i), ExpectedFinishTime: &finish}); err != nil {
				return interceptor.Result{}, err
			}
			select {
			case <-ctx.Done():
				return interceptor.Result{}, ctx.Err()
			case <-time.After(2 * time.Second):
			}
		}
		return interceptor.Complete("volumes copied"), nil
	})
	f.StartInterceptor(t, ns, decliner, declines)

	var evicted []string
	for i := 0; i < 5; i++ {
		evicted = append(evicted, f.CreatePod(t, ns, fmt.Sprintf("web-%d", i), framework.PodOptions{Node: node}).Name)
	}
	evicted = append(evicted,
		f.CreatePod(t, ns, "migrate-0", framework.PodOptions{Node: node, Interceptors: []string{migrator}}).Name,
		f.CreatePod(t, ns, "decline-0", framework.PodOptions{Node: node, Interceptors: []string{decliner}}).Name,
		f.CreatePod(t, ns, "db-0", framework.PodOptions{Node: node, Labels: map[string]string{"app": "db"}}).Name,
	)
	f.SkippedPods(t, ns, node)
	pdb := f.CreatePDB(t, ns, "db", 1, 1)

	drain := f.StartCommand(t, pluginBinary, "drain", node, "--force", "--timeout=4m")
	// The PodDisruptionBudget refuses db-0's eviction; it is relaxed once
	// the drain reports the block.
	framework.Eventually(t, 2*time.Minute, "the drain to report the blocking budget", func(context.Context) error {
		if !strings.Contains(drain.Stdout(), "PodDisruptionBudget db allows no disruption") {
			return fmt.Errorf("output so far:\n%s", drain.Stdout())
		}
		return nil
	})
	f.RelaxPDB(t, ns, pdb.Name)
	if err := drain.Wait(4 * time.Minute); err != nil {
		t.Fatalf("the drain failed: %v\nstdout:\n%s\nstderr:\n%s", err, drain.Stdout(), drain.Stderr())
	}
	out, errOut := drain.Stdout(), drain.Stderr()

	for _, want := range []string{
		"node/" + node + " cordoned",
		"requested the eviction of 8 pods as " + plugin.DefaultRequesterName,
		"pod " + ns + "/migrate-0: Intercepted: interceptor " + migrator + " is active",
		"expects to finish in",
		"copying volume 2 of 3",
		"pod " + ns + "/db-0: Blocked: the eviction was refused",
		"pod " + ns + "/web-0: Gone",
		"8/8 pods gone",
		"node/" + node + " drained",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the drain did not print %q; stdout:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"Warning: node " + node + ": skipping DaemonSet-managed pods: " + ns + "/fluentd-x",
		"Warning: node " + node + ": skipping mirror pods: " + ns + "/etcd-static",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the drain did not warn %q; stderr:\n%s", want, errOut)
		}
	}

	// The final state: the node cordoned, the eight pods gone, the skipped
	// ones still there, every request complete or collected with its pod.
	n, err := f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		t.Errorf("node %s after the drain: %v, unschedulable %v", node, err, n != nil && n.Spec.Unschedulable)
	}
	pods, err := f.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range pods.Items {
		left = append(left, p.Name)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"etcd-static", "fluentd-x"}) {
		t.Errorf("pods left after the drain: %v, want the DaemonSet and mirror pods", left)
	}
	requests, err := f.EvictionRequests(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, er := range requests.Items {
		if !coordinationutil.IsComplete(&er) {
			t.Errorf("request of %s is not complete: %+v", er.Spec.Target.PodRef.Name, er.Status)
		}
	}
	for _, name := range evicted {
		if attempts, granted := f.AuditedEvictions(t, ns, name); granted > 1 {
			t.Errorf("pod %s was evicted %d times (%d attempts)", name, granted, attempts)
		}
	}
}

// Ctrl-C during a drain withdraws the drain's requester from the requests
// that are not complete: they are canceled and the pods stay, and the
// deadline the drain announced on them is removed.
func TestPluginDrainInterruptedWithdrawsItsRequests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	var pods []*corev1.Pod
	for i := 0; i < 3; i++ {
		pods = append(pods, f.CreatePod(t, ns, fmt.Sprintf("db-%d", i), framework.PodOptions{Node: node, Interceptors: []string{parkedInterceptor}}))
	}
	drain := f.StartCommand(t, pluginBinary, "drain", node, "--force", "--report-node-conditions", "--deadline=10m")
	framework.Eventually(t, time.Minute, "the drain to request the evictions and announce its deadline", func(ctx context.Context) error {
		if !strings.Contains(drain.Stdout(), "requested the eviction of 3 pods") {
			return fmt.Errorf("output so far:\n%s", drain.Stdout())
		}
		for _, pod := range pods {
			er, err := f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if er.Annotations[drainpkg.DeadlineAnnotation] == "" {
				return fmt.Errorf("request of %s without the deadline: %v", pod.Name, er.Annotations)
			}
		}
		return nil
	})
	if err := drain.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := drain.Wait(time.Minute); err == nil {
		t.Fatalf("an interrupted drain exited 0; stdout:\n%s", drain.Stdout())
	}
	if got := drain.Stderr(); !strings.Contains(got, "interrupted: withdrew "+plugin.DefaultRequesterName+" from 3 EvictionRequests that were not complete") {
		t.Errorf("stderr:\n%s", got)
	}
	// kubectl drain --report-node-conditions' convention: the interrupted
	// drain says so on the node before it exits.
	n, err := f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := framework.NodeConditionIs(corev1.NodeDrainInProgress, corev1.ConditionFalse, plugin.ReasonDrainInterrupted, "interrupted")(n); err != nil {
		t.Error(err)
	}
	for _, pod := range pods {
		er := f.WaitForCompletion(t, ns, string(pod.UID), v1alpha1.CompleteReasonCanceled)
		if _, ok := er.Annotations[drainpkg.DeadlineAnnotation]; ok {
			t.Errorf("the withdrawn request of %s keeps the drain's deadline: %v", pod.Name, er.Annotations)
		}
		if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("pod %s after the interrupted drain: %v", pod.Name, err)
		}
	}
}

// A drain that times out exits non-zero and names what blocks each pod.
func TestPluginDrainTimesOutNamingTheBlockers(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	f.CreatePod(t, ns, "parked-0", framework.PodOptions{Node: node, Interceptors: []string{parkedInterceptor}})
	f.CreatePod(t, ns, "db-0", framework.PodOptions{Node: node, Labels: map[string]string{"app": "db"}})
	f.CreatePDB(t, ns, "db", 1, 1)

	r := f.RunCommand(t, 2*time.Minute, pluginBinary, "drain", node, "--force", "--timeout=25s", "--report-node-conditions")
	if r.Err == nil {
		t.Fatalf("a drain that cannot finish exited 0; stdout:\n%s", r.Stdout)
	}
	f.WaitForNode(t, node, "the failed drain reported", framework.NodeConditionIs(corev1.NodeDrainInProgress, corev1.ConditionFalse, plugin.ReasonDrainFailed, "timed out after 25s"))
	for _, want := range []string{
		"timed out after 25s waiting for 2 pods:",
		"pod " + ns + "/parked-0: Intercepted: interceptor " + parkedInterceptor + " is active, no heartbeat yet",
		"pod " + ns + "/db-0: Blocked: the eviction was refused",
		"PodDisruptionBudget db allows no disruption",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
}

// Bad input gets a clear error and changes nothing.
func TestPluginRefusesBadInputAndChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	busy := f.NewNode(t)
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{Node: busy})

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a missing node", []string{"drain", busy, "no-such-node"}, `node "no-such-node" not found; nothing was changed`},
		{"a pod that declares no controller", []string{"drain", busy}, "node " + busy + ": cannot request the eviction of Pods that declare no controller (use --force to override): " + ns + "/web-0\nnothing was changed"},
		{"a dry run of an unknown mode", []string{"drain", busy, "--dry-run=maybe"}, `--dry-run must be "none", "client" or "server"`},
		{"no permission", []string{"drain", busy, "--as=nobody"}, "you are not allowed to:"},
		{"a missing pod", []string{"request", "-n", ns, "web-0", "no-such-pod"}, `pod "no-such-pod" not found in namespace ` + ns + "; nothing was changed"},
		{"no permission to delete the pod", []string{"request", "-n", ns, "web-0", "--as=viewer", "--as-group=system:authenticated"}, "delete pods in namespace " + ns},
		{"status of a missing node", []string{"status", "--node", "no-such-node"}, `node "no-such-node" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.RunCommand(t, time.Minute, pluginBinary, tc.args...)
			if r.Err == nil {
				t.Fatalf("exited 0; stdout:\n%s", r.Stdout)
			}
			if !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.Stderr)
			}
		})
	}
	for _, name := range []string{busy} {
		if n, err := f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil || n.Spec.Unschedulable {
			t.Errorf("node %s after bad input: %v, unschedulable %v", name, err, n != nil && n.Spec.Unschedulable)
		}
	}
	if _, err := f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an EvictionRequest of web-0 exists after bad input: %v", err)
	}
}

// request, status and withdraw of single pods.
func TestPluginRequestStatusAndWithdraw(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "db-0")

	r := f.RunCommand(t, time.Minute, pluginBinary, "request", "-n", ns, "db-0")
	if r.Err != nil || !strings.Contains(r.Stdout, "pod/db-0: eviction requested (evictionrequest/"+string(pod.UID)+")") {
		t.Fatalf("request: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	f.WaitUntilActive(t, ns, string(pod.UID), parkedInterceptor)
	r = f.RunCommand(t, time.Minute, pluginBinary, "status", "-n", ns, "db-0")
	for _, want := range []string{"State:", "Intercepted", plugin.DefaultRequesterName, "[0] " + parkedInterceptor, "active, heartbeat none yet", "Cancellation policy:", "Allow", "InterceptorSelected"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("status lacks %q:\n%s%s", want, r.Stdout, r.Stderr)
		}
	}
	r = f.RunCommand(t, time.Minute, pluginBinary, "withdraw", "-n", ns, "db-0")
	if r.Err != nil || !strings.Contains(r.Stdout, "the request is canceled") {
		t.Fatalf("withdraw: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	f.WaitForCompletion(t, ns, string(pod.UID), v1alpha1.CompleteReasonCanceled)
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, "db-0", metav1.GetOptions{}); err != nil {
		t.Errorf("db-0 after the withdrawal: %v", err)
	}
}

// kubectl drain's safety flags: an empty node drains; --dry-run=server
// sends the cordon and the requests as dry runs and changes nothing; -l
// selects the nodes; --delete-emptydir-data and --force let the drain
// evict what it refuses otherwise.
func TestPluginDrainSafetyFlags(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	empty := f.NewNode(t)
	if r := f.RunCommand(t, time.Minute, pluginBinary, "drain", empty, "--timeout=30s"); r.Err != nil || !strings.Contains(r.Stdout, "node/"+empty+" drained") {
		t.Errorf("the drain of an empty node: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}

	busy := f.NewNode(t)
	f.PatchNode(t, busy, map[string]any{"metadata": map[string]any{"labels": map[string]any{"pool": ns}}})
	cache := f.CreatePod(t, ns, "cache-0", framework.PodOptions{Node: busy, Mutate: func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}})
	r := f.RunCommand(t, time.Minute, pluginBinary, "drain", "-l", "pool="+ns, "--force", "--delete-emptydir-data", "--dry-run=client")
	if r.Err != nil || !strings.Contains(r.Stdout, "node/"+busy+" cordoned (dry run)") || !strings.Contains(r.Stdout, "pod/cache-0 requested to leave") ||
		!strings.HasSuffix(strings.TrimSpace(r.Stdout), "(dry run)") {
		t.Errorf("the client dry run: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	// --pod-selector limits the drain to the pods it selects: the emptyDir
	// pod it leaves out is neither checked nor requested.
	r = f.RunCommand(t, time.Minute, pluginBinary, "drain", "-l", "pool="+ns, "--pod-selector=app=none", "--dry-run=client")
	if r.Err != nil || !strings.Contains(r.Stdout, "node/"+busy+" cordoned (dry run)") || strings.Contains(r.Stdout+r.Stderr, "cache-0") {
		t.Errorf("a client dry run selecting no pod: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	r = f.RunCommand(t, time.Minute, pluginBinary, "drain", "-l", "pool="+ns, "--force", "--dry-run=server")
	if r.Err == nil || !strings.Contains(r.Stderr, "cannot request the eviction of Pods with local storage (use --delete-emptydir-data to override): "+ns+"/cache-0") {
		t.Errorf("a drain of a pod with emptyDir data without --delete-emptydir-data: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	r = f.RunCommand(t, time.Minute, pluginBinary, "drain", "-l", "pool="+ns, "--force", "--delete-emptydir-data", "--dry-run=server")
	if r.Err != nil || !strings.Contains(r.Stdout, "node/"+busy+" cordoned (server dry run)") || !strings.Contains(r.Stdout, "pod/cache-0 requested to leave") {
		t.Errorf("the server dry run: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	// Neither dry run changed anything.
	if n, err := f.Kube.CoreV1().Nodes().Get(ctx, busy, metav1.GetOptions{}); err != nil || n.Spec.Unschedulable {
		t.Errorf("node %s after the dry runs: %v, unschedulable %v", busy, err, n != nil && n.Spec.Unschedulable)
	}
	if _, err := f.EvictionRequests(ns).Get(ctx, string(cache.UID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an EvictionRequest exists after the dry runs: %v", err)
	}
	r = f.RunCommand(t, 2*time.Minute, pluginBinary, "drain", "-l", "pool="+ns, "--force", "--delete-emptydir-data", "--ignore-daemonsets", "--timeout=90s", "--report-node-conditions")
	f.WaitForNode(t, busy, "the completed drain reported", framework.NodeConditionIs(corev1.NodeDrained, corev1.ConditionTrue, plugin.ReasonDrainCompleted, ""))
	if r.Err != nil || !strings.Contains(r.Stderr, "Warning: node "+busy+": evicting Pods that use emptyDir local storage, whose data is lost: "+ns+"/cache-0") {
		t.Errorf("the drain with the overrides: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	f.WaitForPodGone(t, ns, cache.Name)
}

// TestPluginDrainSkipsPodsStuckTerminating drains a node whose pod never
// stops terminating (kwok never finishes it, as a kubelet whose node hangs):
// the drain waits for it and times out, unless --skip-wait-for-delete-timeout
// says how long a pod's deletion is waited for, as kubectl drain does.
func TestPluginDrainSkipsPodsStuckTerminating(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	stuck := f.CreatePod(t, ns, "stuck-0", framework.PodOptions{Node: node, Labels: map[string]string{"neverStops": "true"}})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, stuck.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting pod %s: %v", stuck.Name, err)
		}
	})

	r := f.RunCommand(t, time.Minute, pluginBinary, "drain", node, "--force", "--timeout=15s")
	if r.Err == nil || !strings.Contains(r.Stderr, "timed out after 15s waiting for 1 pod") || !strings.Contains(r.Stderr, ns+"/stuck-0") {
		t.Errorf("a drain waiting for a pod that stays terminating: %v, want a time-out naming it\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	pod, err := f.Kube.CoreV1().Pods(ns).Get(t.Context(), stuck.Name, metav1.GetOptions{})
	if err != nil || pod.DeletionTimestamp == nil {
		t.Fatalf("pod %s after the drain: %v, want it terminating", stuck.Name, err)
	}
	r = f.RunCommand(t, time.Minute, pluginBinary, "drain", node, "--force", "--timeout=45s", "--skip-wait-for-delete-timeout=1s")
	if r.Err != nil || !strings.Contains(r.Stdout, "node/"+node+" drained") {
		t.Errorf("a drain that skips pods terminating for more than 1s: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
}
