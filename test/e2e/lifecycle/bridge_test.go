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

package lifecycle

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// Plain kubectl drain of the node of a one-replica Deployment whose pods
// list the surge interceptor as a responder completes, and the Deployment
// never has zero ready replicas: on lifecycle.k8s.io the bridge asks for
// the eviction through an EvictionRequest of its own. Without it, the same
// drain leaves the Deployment without a ready pod for a while.
func TestPlainKubectlDrainWaitsForTheSurgeResponder(t *testing.T) {
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
				f.OptInToTheBridge(t, ns)
			}
			drained := f.PoolNode(t, ns)
			f.CreateDeployment(t, ns, "db", 1, "", func(dep *appsv1.Deployment) {
				dep.Spec.Template.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(surge.DefaultLifecycleName, lifecycleutil.ManagingControllerPriority)}
				dep.Spec.Template.Annotations = map[string]string{localcluster.ReadyAfterAnnotation: "3s"}
			})
			original := f.PodsOf(t, ns, "db")[0]
			if original.Spec.NodeName != drained {
				t.Fatalf("the pod runs on %s, want %s", original.Spec.NodeName, drained)
			}
			f.PoolNode(t, ns)
			w := f.WatchReady(t, ns, "db")
			r := f.RunCommand(t, 4*time.Minute, "kubectl", "drain", drained, "--ignore-daemonsets", "--timeout=3m")
			if r.Err != nil {
				t.Fatalf("kubectl drain failed: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
			}
			f.WaitForReplicas(t, ns, "db", 1)
			w.Stop()
			if minReady, _ := w.Extremes(); minReady != tc.wantMin {
				t.Errorf("the fewest ready pods during kubectl drain: %d, want %d", minReady, tc.wantMin)
			}
		})
	}
}

// A pod whose responder never answers stays: kubectl drain --timeout fails
// naming the responder whose turn it is, and the bridge withdraws its
// request once kubectl stops asking.
func TestKubectlDrainTimesOutOnAHeldPod(t *testing.T) {
	t.Parallel()
	const holder = "e2e.example.com/hold"
	ns := f.NewNamespace(t)
	f.OptInToTheBridge(t, ns)
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "held", framework.PodOptions{Node: node, Mutate: func(p *corev1.Pod) {
		p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(holder, 5000)}
	}})
	r := f.RunCommand(t, 2*time.Minute, "kubectl", "drain", node, "--ignore-daemonsets", "--force", "--timeout=20s")
	if r.Err == nil {
		t.Fatalf("kubectl drain evicted a pod whose responder holds it:\n%s", r.Stdout)
	}
	for _, want := range []string{bridge.Evacuation, "lifecycle.k8s.io", "it is the turn of " + holder} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("kubectl drain's output lacks %q:\n%s", want, r.Stderr)
		}
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the held pod is gone: %v", err)
	}
	status := f.RunCommand(t, time.Minute, pluginBinary, "status", "-n", ns, pod.Name)
	if want := "requested through the eviction API by " + localcluster.AdminUser; !strings.Contains(status.Stdout, want) {
		t.Errorf("kubectl evictionrequest status lacks %q:\n%s%s", want, status.Stdout, status.Stderr)
	}
	framework.CheckBridgeMetrics(t, framework.ScrapeProcessMetrics(t, f.LifecycleController()), framework.ScrapeMetrics(t, f.AdminConfig))
	framework.WaitFor(t, "the bridge to withdraw its EvictionRequest", func(ctx context.Context) (bool, error) {
		list, err := f.Kube.LifecycleV1alpha1().EvictionRequests(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(list.Items) == 1 && !lifecycleutil.WantsEviction(&list.Items[0]), nil
	}, func(withdrawn bool) error {
		if !withdrawn {
			return fmt.Errorf("the bridge's request still wants the eviction")
		}
		return nil
	})
	if v := framework.ScrapeProcessMetrics(t, f.LifecycleController()).Sample(t, "evictionrequest_eviction_bridge_withdrawals_total"); v < 1 {
		t.Errorf("withdrawals_total = %v, want at least the withdrawal of this test", v)
	}
}

// The declarative drain's escalation gets through the bridge: at its
// deadline with evict, the drain evicts a pod whose responder never
// answers, in an opted-in namespace; the bridge, which would answer 429
// while it is that responder's turn, exempts the controller's own identity.
func TestTheBridgeLetsTheDeclarativeDrainsEscalationThrough(t *testing.T) {
	t.Parallel()
	f.CheckDeclarativeEscalationThroughTheBridge(t, framework.PodOptions{Mutate: func(p *corev1.Pod) {
		p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder("e2e.example.com/hold", 5000)}
	}})
}

// In a namespace under the eviction API bridge, the plugin's escalation
// at its deadline evicts a pod whose responder never answers, as a caller
// that may delete it; a user who may only evict cannot skip the responder
// by asking the same way.
func TestPluginDrainEscalatesThroughTheBridge(t *testing.T) {
	t.Parallel()
	f.CheckPluginEscalationThroughTheBridge(t, pluginBinary, framework.PodOptions{Mutate: func(p *corev1.Pod) {
		p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder("e2e.example.com/hold", 5000)}
	}})
}

// Tried as an attacker inside the cluster would, on lifecycle.k8s.io: a
// review posted to evictionrequest-controller's bridge directly, without
// kube-apiserver's client certificate (or with a user's of the cluster),
// is refused with 401 and creates no EvictionRequest, in a namespace that
// opted in as in one that did not; with kube-apiserver's certificate, a
// review for a namespace that did not opt in is allowed and creates none.
func TestTheBridgeActsOnlyForKubeAPIServer(t *testing.T) {
	t.Parallel()
	victim, optedIn := f.NewNamespace(t), f.NewNamespace(t)
	f.OptInToTheBridge(t, optedIn)
	node := f.NewNode(t)
	var pods []*corev1.Pod
	for _, ns := range []string{victim, optedIn} {
		pods = append(pods, f.CreatePod(t, ns, "sensitive-app", framework.PodOptions{Node: node, Mutate: func(p *corev1.Pod) {
			p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder("e2e.example.com/hold", 5000)}
		}}))
	}
	metricsOf := func() framework.MetricSamples {
		return framework.ScrapeProcessMetrics(t, f.LifecycleController())
	}
	const refused = `evictionrequest_eviction_bridge_refused_calls_total{reason="unauthenticated"}`
	before, _ := metricsOf().Value(refused)
	for _, caller := range []localcluster.BridgeCaller{localcluster.NoCertificate, localcluster.ClusterAdmin} {
		for _, pod := range pods {
			if code, _ := f.ForgedReview(t, caller, pod.Namespace, pod.Name, "someone-else@example.com"); code != http.StatusUnauthorized {
				t.Errorf("a review of %s/%s without kube-apiserver's certificate (caller %d): HTTP %d, want 401", pod.Namespace, pod.Name, caller, code)
			}
		}
	}
	code, response := f.ForgedReview(t, localcluster.KubeAPIServer, victim, pods[0].Name, "someone-else@example.com")
	if code != http.StatusOK || response == nil || !response.Allowed {
		t.Errorf("a review of a namespace that did not opt in: HTTP %d, response %+v, want allowed", code, response)
	}
	for _, ns := range []string{victim, optedIn} {
		list, err := f.Kube.LifecycleV1alpha1().EvictionRequests(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil || len(list.Items) != 0 {
			t.Errorf("EvictionRequests in %s: %v, %v; want none", ns, list, err)
		}
	}
	if after, _ := metricsOf().Value(refused); after < before+4 {
		t.Errorf("%s went from %v to %v, want at least 4 more", refused, before, after)
	}
}

// A full ResourceQuota of lifecycle.k8s.io EvictionRequests keeps a pod
// with a responder: the bridge cannot create its request, and refuses the
// eviction with a 429 naming the quota rather than fail open; once the
// quota has room, the request is created on the next retry with its
// annotations in that one write.
func TestAFullQuotaKeepsThePodTheBridgeCannotRequest(t *testing.T) {
	t.Parallel()
	f.CheckAFullQuotaKeepsAProtectedPod(t, evictionapi.Lifecycle, framework.PodOptions{Mutate: func(p *corev1.Pod) {
		p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder("e2e.example.com/hold", 5000)}
	}}, func() framework.MetricSamples {
		return framework.ScrapeProcessMetrics(t, f.LifecycleController())
	})
}
