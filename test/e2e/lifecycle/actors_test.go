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
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	lifecyclecontroller "github.com/evictionrequest/apiserver/cmd/evictionrequest-controller/app"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

const pluginBinary = "kubectl-evictionrequest"

// evictorMessage is a condition: the evictor's message matches re.
func evictorMessage(re *regexp.Regexp) func(*lifecyclev1alpha1.Eviction) error {
	return func(ev *lifecyclev1alpha1.Eviction) error {
		status := lifecycleutil.ResponderStatus(ev, lifecycleutil.Evictor)
		if status == nil || !re.MatchString(ptr.Deref(status.Message, "")) {
			return fmt.Errorf("the evictor's status %+v does not match %s", status, re)
		}
		return nil
	}
}

// budgetedPod creates the pod db-0 in ns with a PodDisruptionBudget that
// refuses its eviction.
func budgetedPod(t *testing.T, ns string) (*corev1.Pod, *policyv1.PodDisruptionBudget) {
	t.Helper()
	pod := f.CreatePod(t, ns, "db-0", framework.PodOptions{Labels: map[string]string{"app": "db"}})
	return pod, f.CreatePDB(t, ns, "db", 1, 1)
}

// refusedAttempt matches the evictor's message after its attempts-th
// attempt was refused by budgetedPod's budget.
func refusedAttempt(attempts int) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(fmt.Sprintf(`"db-0" pod deletion via the /eviction subresource failed (attempts=%d): `, attempts)) +
		`Cannot evict pod as it would violate the pod's disruption budget`)
}

// A PodDisruptionBudget refuses the eviction: the evictor retries with
// backoff (5 s, then 10 s), counting its attempts in its message in
// upstream's words, and evicts the pod once the budget is relaxed.
func TestBudgetRefusesThenRelaxed(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	pod, pdb := budgetedPod(t, ns)
	er := framework.RequestEviction(t, keptRequester(t), pod)

	for _, attempts := range []int{1, 2} {
		ev := f.WaitForEviction(t, pod, fmt.Sprintf("the evictor's attempt %d to be refused", attempts), evictorMessage(refusedAttempt(attempts)))
		if err := framework.ResponderIs(lifecycleutil.Evictor, lifecyclev1alpha1.ResponderStateActive)(ev); err != nil {
			t.Error(err)
		}
		if framework.UpstreamControllers() {
			// Kubernetes' controllers record no events and report only
			// their work queues.
			continue
		}
		f.WaitForEvents(t, ns, "Eviction", ev.Name, eviction.EventEvictionFailed)
		if attempts == 2 {
			// The KEP's count of the refusals, per Eviction.
			failed := `imperative_eviction_responder_controller_failed_evictions_total{eviction="` + ev.Name + `",namespace="` + ns + `",target_name="db-0",target_type="pod"}`
			var metrics framework.MetricSamples
			framework.Eventually(t, 30*time.Second, failed+" to count both refusals", func(context.Context) error {
				metrics = framework.ScrapeProcessMetrics(t, f.LifecycleController())
				if v, _ := metrics.Value(failed); v < 2 {
					return fmt.Errorf("%s = %v", failed, v)
				}
				return nil
			})
			framework.CheckMonitoredMetrics(t, metrics, "imperative_eviction_")
		}
	}

	f.RelaxPDB(t, pdb.Namespace, pdb.Name)
	ev := evicted(t, pod, er)
	evictedOnce(t, pod)
	status := lifecycleutil.ResponderStatus(ev, lifecycleutil.Evictor)
	if status == nil || status.CompletionTime == nil || status.ExpectedCompletionTime == nil {
		t.Errorf("the evictor's entry after the eviction: %+v, want its completion and expected completion times", status)
	}
}

// Upstream's "pdb stalls eviction and cancels eviction": an evictor held
// by a PodDisruptionBudget stops when every requester withdraws; once the
// budget allows the eviction, the pod is still not evicted, and the
// evictor's entry stays as its refused attempt left it, for longer than
// the evictor's next attempt would have taken.
func TestABudgetStalledEvictionThatIsCanceledIsNotRetried(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	pod, pdb := budgetedPod(t, ns)
	r := keptRequester(t)
	framework.RequestEviction(t, r, pod)
	f.WaitForEviction(t, pod, "the evictor's attempt to be refused", evictorMessage(refusedAttempt(1)))

	if _, err := r.Withdraw(t.Context(), ns, pod.UID); err != nil {
		t.Fatal(err)
	}
	ev := f.WaitForEviction(t, pod, "the eviction canceled", all(
		framework.ConditionIs(lifecyclev1alpha1.EvictionConditionFailed, lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters),
		framework.ResponderIs(lifecycleutil.Evictor, lifecyclev1alpha1.ResponderStateCanceled)))
	stalled := lifecycleutil.ResponderStatus(ev, lifecycleutil.Evictor)
	f.RelaxPDB(t, pdb.Namespace, pdb.Name)
	// The evictor's next attempt was due BackoffBase after the first; two
	// of them pass with the budget relaxed.
	framework.Consistently(t, 2*evictor.BackoffBase, "the canceled evictor left the pod and its entry alone", func(ctx context.Context) error {
		if _, granted := f.AuditedEvictions(t, ns, pod.Name); granted != 0 {
			return fmt.Errorf("kube-apiserver granted %d evictions of %s", granted, pod.Name)
		}
		got, err := f.Kube.LifecycleV1alpha1().Evictions(ns).Get(ctx, ev.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if entry := lifecycleutil.ResponderStatus(got, lifecycleutil.Evictor); !apiequality.Semantic.DeepEqual(entry, stalled) {
			return fmt.Errorf("the evictor's entry changed after the cancellation: %+v, was %+v", entry, stalled)
		}
		return nil
	})
	if attempts, _ := f.AuditedEvictions(t, ns, pod.Name); attempts != 1 {
		t.Errorf("kube-apiserver received %d evictions of %s, want the refused one", attempts, pod.Name)
	}
}

// The API's documentation: the evictor evicts the target pod through the
// Eviction API, DaemonSet and mirror pods included (the drains do not ask
// for those: they skip them as kubectl drain does).
func TestEvictorEvictsDaemonSetAndMirrorPods(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	daemonPod, mirrorPod := f.SkippedPods(t, ns, f.NodeNames[0])
	// Kept after the pod: a request owned by its pod may be collected
	// before it is seen reporting the eviction.
	r := keptRequester(t)
	for _, pod := range []*corev1.Pod{daemonPod, mirrorPod} {
		evicted(t, pod, framework.RequestEviction(t, r, pod))
	}
}

// kubectl evictionrequest drain, on lifecycle.k8s.io by discovery, drains a
// node: its own EvictionRequest per pod, a responder's turn shown, the
// DaemonSet and mirror pods skipped as kubectl drain skips them, and the
// node cordoned.
func TestPluginDrainsANode(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	f.StartResponder(t, ns, migrator, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		if err := req.Report(ctx, interceptor.Progress{Message: "copying the data"}); err != nil {
			return interceptor.Result{}, err
		}
		return interceptor.Complete("data copied"), nil
	})
	web := f.CreatePod(t, ns, "web-0", framework.PodOptions{Node: node})
	db := f.CreatePod(t, ns, "db-0", framework.PodOptions{Node: node, Mutate: func(p *corev1.Pod) {
		p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(migrator, 5000)}
	}})
	f.SkippedPods(t, ns, node)

	r := f.RunCommand(t, 3*time.Minute, pluginBinary, "drain", node, "--force", "--timeout=150s")
	if r.Err != nil {
		t.Fatalf("the drain failed: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	for _, pod := range []*corev1.Pod{web, db} {
		if _, err := f.Kube.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pod %s is still there: %v", pod.Name, err)
		}
		evictedOnce(t, pod)
	}
	if want := "requested the eviction of 2 pods as evictionrequest.github.io/kubectl"; !strings.Contains(r.Stdout, want) {
		t.Errorf("the drain does not say %q:\n%s", want, r.Stdout)
	}
	for _, want := range []string{"fluentd-x", "etcd-static"} {
		if !strings.Contains(r.Stdout+r.Stderr, want) {
			t.Errorf("the drain does not name the skipped pod %s:\n%s%s", want, r.Stdout, r.Stderr)
		}
	}
	n, err := f.Kube.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		t.Errorf("node after the drain: %v, %v, want it cordoned", n, err)
	}
}

// The surge interceptor, as the responder a one-replica Deployment's pods
// declare at priority 10000, surges a replacement before the pod goes and
// removes the pod by scaling back, completing its turn: a Ready pod
// throughout, one replica again at the end, and no eviction through the
// API.
func TestSurgeReplacesASingleReplicaWithoutDowntime(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "db", 1, "", func(dep *appsv1.Deployment) {
		dep.Spec.Template.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(surge.DefaultLifecycleName, lifecycleutil.ManagingControllerPriority)}
	})
	original := f.PodsOf(t, ns, "db")[0]
	f.Cordon(t, original.Spec.NodeName)
	other := f.PoolNode(t, ns)

	w := f.WatchReady(t, ns, "db")
	er := framework.RequestEviction(t, keptRequester(t), &original)
	ev := evicted(t, &original, er)
	f.WaitForReplicas(t, ns, "db", 1)
	w.Stop()
	if minReady, _ := w.Extremes(); minReady != 1 {
		t.Errorf("the fewest Ready pods during the eviction: %d, want 1", minReady)
	}
	pods := f.PodsOf(t, ns, "db")
	if len(pods) != 1 || pods[0].UID == original.UID || pods[0].Spec.NodeName != other {
		t.Errorf("pods after the eviction: %v, want one replacement on %s", framework.PodNames(pods), other)
	}
	if err := framework.ResponderIs(surge.DefaultLifecycleName, lifecyclev1alpha1.ResponderStateCompleted)(ev); err != nil {
		t.Error(err)
	}
	if attempts, _ := f.AuditedEvictions(t, ns, original.Name); attempts != 0 {
		t.Errorf("pod %s was evicted through the API %d times; the surge's scale-back removes it", original.Name, attempts)
	}
}

// evictionRequestController restarting in the middle of a flow loses
// nothing: the responder keeps its turn across the restart, the flow goes
// on when it completes, and the pod is evicted once, with one Eviction.
func TestControllerRestartMidFlow(t *testing.T) {
	ns := f.NewNamespace(t)
	release, started := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.StartResponder(t, ns, migrator, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		once.Do(func() { close(started) })
		select {
		case <-release:
			return interceptor.Complete("done after the restart"), nil
		case <-ctx.Done():
			return interceptor.Result{}, ctx.Err()
		}
	})
	pod := podWith(t, ns, "db-0", wrappers.Responder(migrator, 5000))
	er := framework.RequestEviction(t, keptRequester(t), pod)
	f.WaitForEviction(t, pod, "the migrator active", framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateActive))
	wait(t, started, "the migrator's handler to start")

	if err := f.RestartLifecycleController(t.Context()); err != nil {
		t.Fatalf("restarting evictionrequest-controller: %v", err)
	}
	close(release)
	ev := evicted(t, pod, er)
	if err := framework.ResponderIs(migrator, lifecyclev1alpha1.ResponderStateCompleted)(ev); err != nil {
		t.Error(err)
	}
	list, err := f.Kube.LifecycleV1alpha1().Evictions(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("Evictions after the restart: %v, %v, want one", list, err)
	}
	evictedOnce(t, pod)
}

// The declarative node drain speaks lifecycle.k8s.io in
// evictionrequest-controller: a node marked for drain is cordoned, each of
// its pods gets the drain's own EvictionRequest (a responder taking its
// turn first), the DaemonSet and mirror pods are left, and the node says
// it is drained.
func TestDeclarativeNodeDrain(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewNode(t)
	f.StartResponder(t, ns, migrator, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		return interceptor.Complete("data copied"), nil
	})
	pods := []*corev1.Pod{
		f.CreatePod(t, ns, "web-0", framework.PodOptions{Node: node}),
		f.CreatePod(t, ns, "db-0", framework.PodOptions{Node: node, Mutate: func(p *corev1.Pod) {
			p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(migrator, 5000)}
		}}),
	}
	f.SkippedPods(t, ns, node)

	f.MarkForDrain(t, node, true)
	f.WaitForNode(t, node, "the node to be drained", func(n *corev1.Node) error {
		if !n.Spec.Unschedulable {
			return fmt.Errorf("not cordoned")
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeDrained && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", n.Status.Conditions)
	})
	for _, pod := range pods {
		f.WaitForPodGone(t, ns, pod.Name)
		evictedOnce(t, pod)
	}
	f.WaitForEvents(t, "", "Node", node, nodedrain.EventCordoned, nodedrain.EventDrainStarted, nodedrain.EventDrained)
	f.MarkForDrain(t, node, false)
	f.WaitForNode(t, node, "the drain to end", func(n *corev1.Node) error {
		if n.Spec.Unschedulable {
			return fmt.Errorf("still cordoned")
		}
		return nil
	})
}

// Kubernetes 1.37's node lifecycle conditions on lifecycle.k8s.io: a
// maintenance tool that sets MaintenancePlanned=True gets the node drained
// and Drained=True, and MaintenancePlanned=False ends the drain.
func TestMaintenancePlannedDrainsTheNode(t *testing.T) {
	t.Parallel()
	f.CheckMaintenancePlannedDrain(t)
}

// GracefulNodeShutdownInProgress=True is the shutdown signal on
// lifecycle.k8s.io too: the pods' evictions are requested without a
// cordon; False withdraws them.
func TestGracefulNodeShutdownInProgressRequestsAndWithdraws(t *testing.T) {
	t.Parallel()
	nodeDrain, err := participant.New(evictionapi.Lifecycle, lifecyclecontroller.DefaultNodeDrainRequester, f.Kube, nil, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.CheckGracefulShutdownConditionDrain(t, nodeDrain)
}

// A user who may only patch nodes/status cannot start a drain for a
// graceful shutdown on lifecycle.k8s.io either: the policy refuses the
// write or the node drain ignores it, and the node's pod gets no
// EvictionRequest.
func TestAStatusPatcherStartsNoShutdownDrain(t *testing.T) {
	t.Parallel()
	nodeDrain, err := participant.New(evictionapi.Lifecycle, lifecyclecontroller.DefaultNodeDrainRequester, f.Kube, nil, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.CheckAStatusPatcherStartsNoShutdownDrain(t, nodeDrain)
}

// The declarative drain's deadline: a Node annotated with a deadline and
// delete gets the pod a PodDisruptionBudget keeps deleted at the deadline,
// and ends Drained.
func TestDeclarativeDrainDeadline(t *testing.T) {
	t.Parallel()
	f.CheckDeclarativeDrainDeadline(t)
}

// A pool's budget: six nodes of one pool marked for drain at once, under
// a budget of two drains per pool, never have more than two draining, the
// others waiting uncordoned, and all six end Drained.
func TestDeclarativeDrainPoolBudget(t *testing.T) {
	t.Parallel()
	f.CheckDeclarativeDrainPoolBudget(t)
}

// A declarative drain with a deadline, called off before it, leaves no
// deadline on the request it withdrew from.
func TestDeclarativeDrainCalledOffRemovesItsDeadline(t *testing.T) {
	t.Parallel()
	nodeDrain, err := participant.New(evictionapi.Lifecycle, lifecyclecontroller.DefaultNodeDrainRequester, f.Kube, nil, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.CheckDeclarativeDrainCalledOffRemovesItsDeadline(t, nodeDrain)
}

// A drain whose view of a node lags behind does not ask again for a pod
// kube-apiserver no longer has, whose request went with it: on
// lifecycle.k8s.io nothing would refuse the request of a pod that is gone.
func TestADrainDoesNotAskAgainForAPodGone(t *testing.T) {
	t.Parallel()
	f.CheckADrainDoesNotAskAgainForAPodGone(t, evictionapi.Lifecycle)
}
