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
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	coordinationv1alpha1 "github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// optIn labels ns so that the eviction API bridge acts in it.
func optIn(t *testing.T, ns string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, bridge.NamespaceLabel, bridge.NamespaceOptIn)
	f.MustKubectl(t, "patch", "namespace", ns, "--type=merge", "-p", patch)
}

// kubectlDrain runs the real kubectl drain of node, as any cluster admin
// or tool built on it does.
func kubectlDrain(t *testing.T, node string, args ...string) framework.KubectlResult {
	t.Helper()
	return f.RunCommand(t, 4*time.Minute, "kubectl", append([]string{"drain", node, "--ignore-daemonsets", "--delete-emptydir-data"}, args...)...)
}

// readyAfter delays the readiness of the Deployment's pods, as an
// application that loads before it serves: the replacement of an evicted
// pod is not ready at once.
func readyAfter(d time.Duration) func(*appsv1.Deployment) {
	return func(dep *appsv1.Deployment) {
		dep.Spec.Template.Annotations[localcluster.ReadyAfterAnnotation] = d.String()
	}
}

// Plain kubectl drain of the node of a one-replica Deployment the surge
// interceptor guards completes, and the Deployment never has zero ready
// replicas: the bridge turns kubectl's evictions into the pod's
// EvictionRequest and lets them through once the surge replaced the pod.
// Without the bridge (a namespace that did not opt in) the same drain
// leaves the Deployment without a ready pod until the replacement loads.
func TestPlainKubectlDrainWaitsForTheSurge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		optIn   bool
		wantMin int
	}{
		{"opted in", true, 1},
		{"not opted in", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := f.NewNamespace(t)
			if tc.optIn {
				optIn(t, ns)
			}
			drained := f.PoolNode(t, ns)
			f.CreateDeployment(t, ns, "db", 1, surge.DefaultName, readyAfter(3*time.Second))
			original := f.PodsOf(t, ns, "db")[0]
			if original.Spec.NodeName != drained {
				t.Fatalf("the pod runs on %s, want %s", original.Spec.NodeName, drained)
			}
			f.PoolNode(t, ns)
			w := f.WatchReady(t, ns, "db")
			if r := kubectlDrain(t, drained, "--timeout=3m"); r.Err != nil {
				t.Fatalf("kubectl drain failed: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
			}
			f.WaitForReplicas(t, ns, "db", 1)
			w.Stop()
			if minReady, _ := w.Extremes(); minReady != tc.wantMin {
				t.Errorf("the fewest ready pods during kubectl drain: %d, want %d", minReady, tc.wantMin)
			}
			if !tc.optIn {
				return
			}
			events := f.EventMessages(t, ns, "EvictionRequest", string(original.UID), bridge.EventRequestedThroughEvictionAPI)
			if !strings.Contains(events, "Requested through the eviction API by ") {
				t.Errorf("no event names the caller of the eviction: %q", events)
			}
		})
	}
}

// A pod whose interceptor holds its turn stays: kubectl drain --timeout
// fails, its retries naming the interceptor, and once kubectl stops asking
// the bridge withdraws after the inactivity time-out.
func TestKubectlDrainTimesOutOnAHeldPodAndTheBridgeWithdraws(t *testing.T) {
	t.Parallel()
	const holder = "hold.e2e.example.com"
	ns := f.NewNamespace(t)
	optIn(t, ns)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "held", framework.PodOptions{Node: node, Interceptors: []string{holder}})
	r := kubectlDrain(t, node, "--force", "--timeout=20s")
	if r.Err == nil {
		t.Fatalf("kubectl drain evicted a pod whose interceptor holds it:\n%s", r.Stdout)
	}
	for _, want := range []string{bridge.Evacuation, "it is the turn of " + holder} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("kubectl drain's output lacks %q:\n%s", want, r.Stderr)
		}
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the held pod is gone: %v", err)
	}
	f.WaitForRequest(t, ns, string(pod.UID), "the bridge to withdraw", func(er *coordinationv1alpha1.EvictionRequest) error {
		for _, r := range er.Spec.Requesters {
			if r.Name == bridge.CoordinationRequester {
				return fmt.Errorf("requesters %v", er.Spec.Requesters)
			}
		}
		return nil
	})
}

// Pods without interceptors drain as without the bridge, and no request is
// made of them; a server-side dry run of a pod with interceptors writes
// nothing; a PodDisruptionBudget still refuses the eviction the bridge lets
// through at the eviction step.
func TestTheBridgeLeavesTheRestAsItWas(t *testing.T) {
	t.Parallel()
	const done = "done.e2e.example.com"
	ctx := t.Context()
	ns := f.NewNamespace(t)
	optIn(t, ns)

	plainNode := f.NewNode(t)
	f.CreatePod(t, ns, "plain", framework.PodOptions{Node: plainNode})
	if r := kubectlDrain(t, plainNode, "--force", "--timeout=1m"); r.Err != nil {
		t.Fatalf("kubectl drain of a pod without interceptors: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}

	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "guarded", framework.PodOptions{Node: node, Interceptors: []string{done}, Labels: map[string]string{"app": "guarded"}})
	// A dry run is answered as the real eviction would be: refused.
	if r := kubectlDrain(t, node, "--force", "--dry-run=server", "--timeout=12s"); r.Err == nil || !strings.Contains(r.Stderr, bridge.Evacuation) {
		t.Fatalf("kubectl drain --dry-run=server: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	if list, err := f.EvictionRequests(ns).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("the drains left %d EvictionRequests (%v), want none", len(list.Items), err)
	}

	f.CreatePDB(t, ns, "guarded", 1, 1)
	f.StartInterceptor(t, ns, done, func(context.Context, *interceptor.Request) (interceptor.Result, error) {
		return interceptor.Complete("done"), nil
	})
	r := kubectlDrain(t, node, "--force", "--timeout=30s")
	if r.Err == nil || !strings.Contains(r.Stderr, "disruption budget") {
		t.Errorf("kubectl drain got past a PodDisruptionBudget: %v\n%s", r.Err, r.Stderr)
	}
	er := f.WaitForRequest(t, ns, string(pod.UID), "the interceptor to complete its turn", func(er *coordinationv1alpha1.EvictionRequest) error {
		if !er.Status.ActiveInterceptorCompleted {
			return fmt.Errorf("status %+v", er.Status)
		}
		return nil
	})
	if er.Status.PodEvictionStatus == nil || er.Status.PodEvictionStatus.FailedAPIEvictionCounter == 0 {
		t.Errorf("the controller's own evictions were not refused by the budget: %+v", er.Status.PodEvictionStatus)
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the budget's pod is gone: %v", err)
	}
}
