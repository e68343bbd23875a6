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
	"net/http"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	coordinationv1alpha1 "github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

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
				f.OptInToTheBridge(t, ns)
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
	f.OptInToTheBridge(t, ns)
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
	status := f.RunCommand(t, time.Minute, pluginBinary, "status", "-n", ns, pod.Name)
	if want := "requested through the eviction API by " + localcluster.AdminUser; !strings.Contains(status.Stdout, want) {
		t.Errorf("kubectl evictionrequest status lacks %q:\n%s%s", want, status.Stdout, status.Stderr)
	}
	framework.CheckBridgeMetrics(t, framework.ScrapeMetrics(t, f.ServerClientConfig(f.EvictionServer())), framework.ScrapeMetrics(t, f.AdminConfig))
	f.WaitForRequest(t, ns, string(pod.UID), "the bridge to withdraw", func(er *coordinationv1alpha1.EvictionRequest) error {
		for _, r := range er.Spec.Requesters {
			if r.Name == bridge.CoordinationRequester {
				return fmt.Errorf("requesters %v", er.Spec.Requesters)
			}
		}
		return nil
	})
	if v := framework.ScrapeMetrics(t, f.ServerClientConfig(f.EvictionServer())).Sample(t, "evictionrequest_eviction_bridge_withdrawals_total"); v < 1 {
		t.Errorf("withdrawals_total = %v, want at least the withdrawal of this test", v)
	}
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
	f.OptInToTheBridge(t, ns)

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
	// The interceptor completed its turn: the bridge let the evictions
	// through, and the budget refused them, kubectl's and the controller's.
	f.WaitForRequest(t, ns, string(pod.UID), "the controller's evictions refused by the budget", func(er *coordinationv1alpha1.EvictionRequest) error {
		if er.Status.PodEvictionStatus == nil || er.Status.PodEvictionStatus.FailedAPIEvictionCounter == 0 {
			return fmt.Errorf("status %+v", er.Status)
		}
		return nil
	})
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the budget's pod is gone: %v", err)
	}
}

// bridgeVariant registers, beside the component's webhook, a copy of it for
// the namespaces labelled value (and no others), changed by mutate, until
// the test ends: a test changes how the bridge is installed without
// touching the other tests' namespaces.
func bridgeVariant(t *testing.T, value string, mutate func(*admissionregistrationv1.ValidatingWebhook)) {
	t.Helper()
	ctx := t.Context()
	configs := f.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	installed, err := configs.Get(ctx, "evictionrequest-eviction-bridge", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	variant := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + value},
		Webhooks:   installed.Webhooks,
	}
	w := &variant.Webhooks[0]
	w.Name = value + ".e2e.example.com"
	w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{bridge.NamespaceLabel: value}}
	mutate(w)
	if _, err := configs.Create(ctx, variant, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = configs.Delete(context.Background(), variant.Name, metav1.DeleteOptions{}) })
}

// exemptInInstalledWebhook adds user to the identities the matchConditions
// of the installed webhook exempt, until the test ends: other tests'
// evictions are not the user's.
func exemptInInstalledWebhook(t *testing.T, user string) {
	t.Helper()
	configs := f.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	setExpression := func(ctx context.Context, change func(string) string) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			installed, err := configs.Get(ctx, framework.BridgeWebhookConfiguration, metav1.GetOptions{})
			if err != nil {
				return err
			}
			condition := &installed.Webhooks[0].MatchConditions[0]
			condition.Expression = change(condition.Expression)
			_, err = configs.Update(ctx, installed, metav1.UpdateOptions{})
			return err
		})
	}
	quoted := fmt.Sprintf("'%s', ", user)
	if err := setExpression(t.Context(), func(e string) string { return strings.Replace(e, "in [", "in ["+quoted, 1) }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := setExpression(ctx, func(e string) string { return strings.Replace(e, quoted, "", 1) }); err != nil {
			t.Errorf("restoring the installed webhook's matchConditions: %v", err)
		}
	})
}

// labelNamespace sets the bridge's namespace label of ns to value.
func labelNamespace(t *testing.T, ns, value string) {
	t.Helper()
	f.MustKubectl(t, "label", "namespace", ns, "--overwrite", bridge.NamespaceLabel+"="+value)
}

// A bridge that cannot be reached, with the component's failurePolicy
// Ignore, leaves evictions as they are without it: kubectl drain evicts a
// pod with interceptors at once.
func TestABridgeThatIsDownLetsEvictionsThrough(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	bridgeVariant(t, "down", func(w *admissionregistrationv1.ValidatingWebhook) {
		// A port nothing listens on: the call fails.
		w.ClientConfig.Service.Port = ptr.To(int32(1))
	})
	labelNamespace(t, ns, "down")
	node := f.NewNode(t)
	pod := f.CreatePod(t, ns, "held", framework.PodOptions{Node: node, Interceptors: []string{"hold.e2e.example.com"}})
	// kube-apiserver calls the webhook, fails, and lets the eviction
	// through: its fail-open counter shows it, once it loaded the webhook.
	failedOpen := func() float64 {
		v, _ := framework.ScrapeMetrics(t, f.AdminConfig).Value(`apiserver_admission_webhook_fail_open_count{name="down.e2e.example.com",type="validating"}`)
		return v
	}
	framework.Eventually(t, time.Minute, "kube-apiserver to call the webhook that is down", func(ctx context.Context) error {
		err := f.Kube.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}})
		if n := failedOpen(); err != nil || n == 0 {
			return fmt.Errorf("dry-run eviction: %v; failed open %v times", err, n)
		}
		return nil
	})
	before := failedOpen()
	if r := kubectlDrain(t, node, "--force", "--timeout=1m"); r.Err != nil {
		t.Fatalf("kubectl drain with the bridge down: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	f.WaitForPodGone(t, ns, pod.Name)
	if after := failedOpen(); after <= before {
		t.Errorf("kube-apiserver's fail-open count of the webhook went from %v to %v: the drain's eviction did not go past it", before, after)
	}
	if list, err := f.EvictionRequests(ns).List(t.Context(), metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("%d EvictionRequests (%v), want none: the bridge was down", len(list.Items), err)
	}
	framework.CheckMonitoredMetrics(t, framework.ScrapeMetrics(t, f.AdminConfig), "apiserver_admission_webhook_fail_open_count")
}

// An identity the webhook's matchConditions exempt, such as an interceptor
// that evicts its own pod as the KEP recommends, evicts at once; anyone
// else waits.
func TestAnExemptIdentityEvictsAtOnce(t *testing.T) {
	t.Parallel()
	const exempt = "e2e-exempt-interceptor"
	ns := f.NewNamespace(t)
	// The installed webhook, whose namespaceSelector the bridge applies
	// itself, exempts the identity as docs/eviction-bridge.md shows.
	exemptInInstalledWebhook(t, exempt)
	f.OptInToTheBridge(t, ns)
	pod := f.CreatePod(t, ns, "own", framework.PodOptions{Interceptors: []string{"hold.e2e.example.com"}})
	evict := func(user string) error {
		client, err := kubernetes.NewForConfig(f.ImpersonatingConfig(user, "system:masters"))
		if err != nil {
			t.Fatal(err)
		}
		return client.PolicyV1().Evictions(ns).Evict(t.Context(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name}})
	}
	// The new webhook may take kube-apiserver a moment to call.
	framework.Eventually(t, time.Minute, "an eviction by another identity refused by the bridge", func(context.Context) error {
		if err := evict("e2e-someone-else"); !apierrors.IsTooManyRequests(err) {
			return fmt.Errorf("eviction: %v", err)
		}
		return nil
	})
	if err := evict(exempt); err != nil {
		t.Fatalf("the exempt identity's eviction: %v", err)
	}
	f.WaitForPodGone(t, ns, pod.Name)
}

// The declarative drain's escalation gets through the bridge: at its
// deadline with evict, the drain evicts a pod whose interceptor never
// answers, in an opted-in namespace; the bridge, which would answer 429
// until the interceptor is done, exempts the server's own identity.
func TestTheBridgeLetsTheDeclarativeDrainsEscalationThrough(t *testing.T) {
	t.Parallel()
	f.CheckDeclarativeEscalationThroughTheBridge(t, framework.PodOptions{Interceptors: []string{parkedInterceptor}})
}

// Tried as an attacker inside the cluster would: a review posted to the
// bridge's port directly, without kube-apiserver's client certificate (or
// with a user's of the cluster), is refused with 401 and creates nothing,
// for a pod in a namespace that opted in as for one that did not; a review
// with kube-apiserver's certificate for a namespace that did not opt in is
// allowed untouched and creates nothing either.
func TestTheBridgeActsOnlyForKubeAPIServer(t *testing.T) {
	t.Parallel()
	const holder = "hold.e2e.example.com"
	victim, optedIn := f.NewNamespace(t), f.NewNamespace(t)
	f.OptInToTheBridge(t, optedIn)
	node := f.NewNode(t)
	pods := []*corev1.Pod{
		f.CreatePod(t, victim, "sensitive-app", framework.PodOptions{Node: node, Interceptors: []string{holder}}),
		f.CreatePod(t, optedIn, "sensitive-app", framework.PodOptions{Node: node, Interceptors: []string{holder}}),
	}
	metricsOf := func() framework.MetricSamples {
		return framework.ScrapeMetrics(t, f.ServerClientConfig(f.EvictionServer()))
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
	for _, pod := range pods {
		if _, err := f.EvictionRequests(pod.Namespace).Get(t.Context(), string(pod.UID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the EvictionRequest of %s/%s: %v, want none", pod.Namespace, pod.Name, err)
		}
	}
	if after, _ := metricsOf().Value(refused); after < before+4 {
		t.Errorf("%s went from %v to %v, want at least 4 more", refused, before, after)
	}
}

// A full ResourceQuota of EvictionRequests keeps a pod with an interceptor:
// the bridge cannot create its request, and refuses the eviction with a
// 429 naming the quota rather than fail open; once the quota has room, the
// request is created on the next retry with its annotations in that one
// write.
func TestAFullQuotaKeepsThePodTheBridgeCannotRequest(t *testing.T) {
	t.Parallel()
	f.CheckAFullQuotaKeepsAProtectedPod(t, evictionapi.Coordination, framework.PodOptions{Interceptors: []string{"hold.e2e.example.com"}},
		func() framework.MetricSamples {
			return framework.ScrapeMetrics(t, f.ServerClientConfig(f.EvictionServer()))
		})
}
