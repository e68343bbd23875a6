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
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// podOnCordonedNode creates the one-replica Deployment db of createDeployment
// and returns its pod once the pod's node is cordoned and another node of the
// pool can take a replacement.
func podOnCordonedNode(t *testing.T, ns, interceptorName string, mutate func(*appsv1.Deployment)) corev1.Pod {
	t.Helper()
	f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "db", 1, interceptorName, mutate)
	pod := f.PodsOf(t, ns, "db")[0]
	f.Cordon(t, pod.Spec.NodeName)
	f.PoolNode(t, ns)
	return pod
}

// A one-replica Deployment that opted in keeps a Ready pod throughout the
// drain of its node; one that did not has a moment without any.
func TestSurgeReplacesASingleReplicaWithoutDowntime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		interceptor string
		wantMin     int
	}{
		{"opted in", surge.DefaultName, 1},
		{"not opted in", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			ns := f.NewNamespace(t)
			drained := f.PoolNode(t, ns)
			f.CreateDeployment(t, ns, "db", 1, tc.interceptor, nil)
			original := f.PodsOf(t, ns, "db")[0]
			if original.Spec.NodeName != drained {
				t.Fatalf("the pod runs on %s, want %s", original.Spec.NodeName, drained)
			}
			other := f.PoolNode(t, ns)

			w := f.WatchReady(t, ns, "db")
			r := f.RunCommand(t, 3*time.Minute, pluginBinary, "drain", drained, "--timeout=150s")
			if r.Err != nil {
				t.Fatalf("the drain failed: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
			}
			dep := f.WaitForReplicas(t, ns, "db", 1)
			w.Stop()
			if minReady, _ := w.Extremes(); minReady != tc.wantMin {
				t.Errorf("the fewest Ready pods during the drain: %d, want %d", minReady, tc.wantMin)
			}
			pods := f.PodsOf(t, ns, "db")
			if len(pods) != 1 || pods[0].UID == original.UID || pods[0].Spec.NodeName != other {
				t.Errorf("pods after the drain: %v, want one replacement on %s", framework.PodNames(pods), other)
			}
			if tc.interceptor == "" {
				return
			}
			if !strings.Contains(r.Stdout, "Surging Deployment db to 2 replicas to replace pod "+original.Name) {
				t.Errorf("the drain did not show the surge:\n%s", r.Stdout)
			}
			events := f.EventReasons(t, ns, "Deployment", dep.Name)
			for _, want := range []string{surge.EventSurgeStarted, surge.EventSurgeScaledDown} {
				if !slices.Contains(events, want) {
					t.Errorf("Deployment events %v lack %s", events, want)
				}
			}
			if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, original.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the original pod is still there: %v", err)
			}
		})
	}
}

// Three replicas, two on the drained node, maxSurge 1: one surge at a time,
// never fewer than three Ready pods and never more than four.
func TestSurgeStaysWithinMaxSurge(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	drained := f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "web", 2, surge.DefaultName, nil)
	f.Cordon(t, drained)
	f.PoolNode(t, ns)
	f.PoolNode(t, ns)
	dep, err := f.Kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep.Spec.Replicas = ptr.To[int32](3)
	if _, err := f.Kube.AppsV1().Deployments(ns).Update(ctx, dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForReplicas(t, ns, "web", 3)
	onDrained := 0
	for _, pod := range f.PodsOf(t, ns, "web") {
		if pod.Spec.NodeName == drained {
			onDrained++
		}
	}
	if onDrained != 2 {
		t.Fatalf("%d pods on the drained node, want 2", onDrained)
	}

	w := f.WatchReady(t, ns, "web")
	r := f.RunCommand(t, 3*time.Minute, pluginBinary, "drain", drained, "--timeout=150s")
	if r.Err != nil {
		t.Fatalf("the drain failed: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	f.WaitForReplicas(t, ns, "web", 3)
	w.Stop()
	if minReady, maxLive := w.Extremes(); minReady < 3 || maxLive > 4 {
		t.Errorf("during the drain: at least %d Ready pods (want 3), at most %d live pods (want 4)", minReady, maxLive)
	}
	for _, pod := range f.PodsOf(t, ns, "web") {
		if pod.Spec.NodeName == drained {
			t.Errorf("pod %s is still on the drained node", pod.Name)
		}
	}
}

// startOwnSurgeInterceptor runs a surge interceptor of the test's own, named
// name and limited to ns, so that the test may kill it. Its log and its
// leader election lease are named after ns and the first label of name, so
// that a test may run two.
func startOwnSurgeInterceptor(t *testing.T, ns, name string, args ...string) *localcluster.Process {
	t.Helper()
	id := "surge-" + ns + "-" + strings.SplitN(name, ".", 2)[0]
	p, err := f.StartSurgeInterceptor(t.Context(), localcluster.WorkloadOptions{
		Name: id,
		Args: append([]string{"--name=" + name, "--namespace=" + ns, "--leader-elect-resource-name=" + id,
			"--poll-interval=500ms", "--janitor-period=1s", "--heartbeat-period=1s", "--v=4"}, args...),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// waitForSurge waits until the Deployment surges and returns it.
func waitForSurge(t *testing.T, ns, name string, replicas int32) *appsv1.Deployment {
	t.Helper()
	return f.WaitForDeployment(t, ns, name, "the surge of "+name, func(dep *appsv1.Deployment) error {
		if _, ok := dep.Annotations[surge.StateAnnotation]; !ok || *dep.Spec.Replicas != replicas {
			return fmt.Errorf("replicas %d, annotations %v", *dep.Spec.Replicas, dep.Annotations)
		}
		return nil
	})
}

// The interceptor is killed mid-surge; started again it finishes the job
// from the state it left on the objects.
func TestSurgeInterceptorRestartedMidSurgeFinishes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "surge-restart.e2e.example.com"
	first := startOwnSurgeInterceptor(t, ns, name)
	// The replacement is Ready at once on kwok, and available 8 s later:
	// the surge is still waiting when the interceptor is killed.
	original := podOnCordonedNode(t, ns, name, func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 8 })
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, &original); err != nil {
		t.Fatal(err)
	}
	waitForSurge(t, ns, "db", 2)

	first.Kill()
	second := startOwnSurgeInterceptor(t, ns, name)
	waitForReplacementBySurge(t, ns, original)
	// What the monitoring component's dashboard reads of the surge
	// interceptor is on its /metrics.
	framework.CheckMonitoredMetrics(t, framework.ScrapeMetricsURL(t, second.MetricsURL), "evictionrequest_surge_interceptor_")
}

// Two surge interceptors of different names on one pod: the first is killed
// mid-surge and times out. The second, handed the request, does not join the
// first's surge (it would report on the first's replacement) but waits until
// a janitor undoes it, the first no longer holding the request; then it
// replaces the pod with a surge of its own, never with more than one
// replacement at a time or without a Ready pod.
func TestSurgeHandedOverToAnotherSurgeInterceptor(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const first, second = "surge-first.e2e.example.com", "surge-second.e2e.example.com"
	firstProcess := startOwnSurgeInterceptor(t, ns, first)
	// The highest index is selected first. The replacement is available
	// 8 s after it is Ready: the surge still waits when the first is killed.
	original := podOnCordonedNode(t, ns, second+","+first, func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 8 })
	w := f.WatchReady(t, ns, "db")
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, &original); err != nil {
		t.Fatal(err)
	}
	uid := string(original.UID)
	waitForSurgeBy(t, ns, "db", first)
	firstReplacement := waitForReplacementPod(t, ns, original)

	firstProcess.Kill()
	// The second's own janitor looks at start, while the first still holds
	// the request, and not again for a while: the first's surge outlives
	// the hand-over until the cluster's janitor (every 10 s) undoes it.
	startOwnSurgeInterceptor(t, ns, second, "--janitor-period=1m")
	messages := watchMessages(t, ns, uid, second)
	active := f.WaitUntilActive(t, ns, uid, first)
	deadline := time.Duration(*active.Spec.HeartbeatDeadlineSeconds) * time.Second
	setStatus(t, ns, uid, func(er *v1alpha1.EvictionRequest) {
		er.Status.HeartbeatTime = ptr.To(metav1.NewTime(time.Now().Add(-deadline - time.Minute).Truncate(time.Second)))
	})

	waitForSurgeBy(t, ns, "db", second)
	f.WaitForCompletion(t, ns, uid, v1alpha1.CompleteReasonPodDeleted)
	f.WaitForReplicas(t, ns, "db", 1)
	w.Stop()
	for _, message := range messages() {
		if strings.Contains(message, firstReplacement) {
			t.Errorf("the second interceptor joined the first's surge: %q", message)
		}
	}
	if minReady, maxLive := w.Extremes(); minReady < 1 || maxLive > 2 {
		t.Errorf("pods of db during the hand-over: at least %d Ready and at most %d live, want 1 and 2", minReady, maxLive)
	}
	if pods := f.PodsOf(t, ns, "db"); len(pods) != 1 || pods[0].UID == original.UID {
		t.Errorf("pods after the surge: %v", framework.PodNames(pods))
	}
	if reasons := f.EventReasons(t, ns, "", uid); slices.Contains(reasons, coordinationcontroller.EventEvicted) {
		t.Errorf("the pod was evicted through the API: %v", reasons)
	}
	f.WaitForEvents(t, ns, "", "db", surge.EventSurgeStarted, surge.EventSurgeReverted, surge.EventSurgeScaledDown)
}

// watchMessages records every status.message the EvictionRequest name
// shows from now on while interceptor is active; the function it returns
// stops the watch and returns them in order.
func watchMessages(t *testing.T, ns, name, interceptor string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	options := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	list, err := f.EvictionRequests(ns).List(ctx, options)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		messages []string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			options.ResourceVersion = rv
			w, err := f.EvictionRequests(ns).Watch(ctx, options)
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("watching EvictionRequest %s: %v", name, err)
				}
				return
			}
			for e := range w.ResultChan() {
				if e.Type == watch.Error {
					// Expired (or stopped): the messages cannot be
					// followed any more.
					if ctx.Err() == nil {
						t.Errorf("watching EvictionRequest %s: %v", name, apierrors.FromObject(e.Object))
					}
					w.Stop()
					return
				}
				if er, ok := e.Object.(*v1alpha1.EvictionRequest); ok {
					rv = er.ResourceVersion
					if ptr.Deref(er.Status.ActiveInterceptorName, "") != interceptor {
						continue
					}
					mu.Lock()
					if n := len(messages); n == 0 || messages[n-1] != er.Status.Message {
						messages = append(messages, er.Status.Message)
					}
					mu.Unlock()
				}
			}
			w.Stop()
		}
	}()
	stop := func() []string {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return messages
	}
	t.Cleanup(func() { stop() })
	return stop
}

// waitForReplacementPod waits until Deployment db has a pod besides
// original and returns its name.
func waitForReplacementPod(t *testing.T, ns string, original corev1.Pod) string {
	t.Helper()
	var name string
	framework.Eventually(t, time.Minute, "a replacement of "+original.Name, func(context.Context) error {
		for _, pod := range f.PodsOf(t, ns, "db") {
			if pod.UID != original.UID {
				name = pod.Name
				return nil
			}
		}
		return fmt.Errorf("no pod besides %s", original.Name)
	})
	return name
}

// waitForSurgeBy waits until the Deployment name is in a surge of the
// interceptor named by.
func waitForSurgeBy(t *testing.T, ns, name, by string) {
	t.Helper()
	f.WaitForDeployment(t, ns, name, fmt.Sprintf("a surge of %s by %s", name, by), func(dep *appsv1.Deployment) error {
		var state surge.State
		if value, ok := dep.Annotations[surge.StateAnnotation]; !ok || json.Unmarshal([]byte(value), &state) != nil || state.Interceptor != by {
			return fmt.Errorf("replicas %d, annotations %v", *dep.Spec.Replicas, dep.Annotations)
		}
		return nil
	})
}

// waitForReplacementBySurge waits until the request for original completes
// with the pod deleted and Deployment db is back at one replica, a new pod,
// and checks that neither the Eviction API nor a time-out removed it.
func waitForReplacementBySurge(t *testing.T, ns string, original corev1.Pod) {
	t.Helper()
	f.WaitForCompletion(t, ns, string(original.UID), v1alpha1.CompleteReasonPodDeleted)
	f.WaitForReplicas(t, ns, "db", 1)
	if pods := f.PodsOf(t, ns, "db"); len(pods) != 1 || pods[0].UID == original.UID {
		t.Errorf("pods after the surge: %v", framework.PodNames(pods))
	}
	if reasons := f.EventReasons(t, ns, "", string(original.UID)); slices.Contains(reasons, coordinationcontroller.EventEvicted) || slices.Contains(reasons, coordinationcontroller.EventInterceptorTimedOut) {
		t.Errorf("the pod was evicted through the API or the interceptor timed out: %v", reasons)
	}
}

// The pod-deletion-cost annotation is honored on a best-effort basis: a
// ReplicaSet controller whose cache has not seen the mark yet removes the
// replacement on the scale-back and keeps the pod. The test builds that
// state (the request held under Forbid, the pod marked, the Deployment back
// at one replica and no surge) before the interceptor starts: it surges
// again rather than wait for a removal that never comes.
func TestSurgeAgainWhenTheReplicaSetKeptThePod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "surge-kept.e2e.example.com"
	original := podOnCordonedNode(t, ns, name, nil)
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, &original); err != nil {
		t.Fatal(err)
	}
	uid := string(original.UID)
	f.WaitUntilActive(t, ns, uid, name)
	setStatus(t, ns, uid, func(er *v1alpha1.EvictionRequest) {
		er.Status.HeartbeatTime = ptr.To(metav1.Now())
		er.Status.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Forbid)
	})
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		surge.DeletionCostAnnotation: "-2147483648", surge.OriginalDeletionCostAnnotation: "", surge.MarkedByAnnotation: name,
	}}})
	if _, err := f.Kube.CoreV1().Pods(ns).Patch(ctx, original.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	startOwnSurgeInterceptor(t, ns, name)
	waitForReplacementBySurge(t, ns, original)
	f.WaitForEvents(t, ns, "", "db", surge.EventSurgeRetried, surge.EventSurgeStarted, surge.EventSurgeScaledDown)
}

// A ReplicaSet that has no reason to prefer the marked pod (every pod has
// the lowest deletion cost from the template, and the replacements share a
// node, which the ReplicaSet empties first) keeps it on every scale-back:
// after a bounded number of surges the interceptor passes the request on
// and the pod is evicted through the API.
func TestSurgePassesOnWhenTheReplicaSetKeepsThePod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "surge-kept-always.e2e.example.com"
	startOwnSurgeInterceptor(t, ns, name)
	original := podOnCordonedNode(t, ns, name, func(d *appsv1.Deployment) {
		d.Spec.Template.Annotations[surge.DeletionCostAnnotation] = "-2147483648"
	})
	if _, err := f.Kube.AppsV1().Deployments(ns).Patch(ctx, "db", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForReplicas(t, ns, "db", 2)
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, &original); err != nil {
		t.Fatal(err)
	}

	uid := string(original.UID)
	er := f.WaitForCompletion(t, ns, uid, v1alpha1.CompleteReasonPodDeleted)
	// Passed on with no removal in flight: a requester could have
	// withdrawn while the Eviction API was refused.
	if policy := ptr.Deref(er.Status.EvictionRequestCancellationPolicy, ""); policy != v1alpha1.Allow {
		t.Errorf("cancellation policy after the pass-on: %q, want Allow", policy)
	}
	f.WaitForEvents(t, ns, "", uid, coordinationcontroller.EventEvicted)
	f.WaitForEvents(t, ns, "", "db", surge.EventSurgeRetried, surge.EventSurgePassedOn)
	if got := f.EventMessages(t, ns, "", "db", surge.EventSurgePassedOn); !strings.Contains(got, "kept pod "+original.Name+" after 3 scale-backs") {
		t.Errorf("SurgePassedOn events: %q, want one naming the kept pod and the scale-backs", got)
	}
	f.WaitForReplicas(t, ns, "db", 2)
}

// A surge whose pod can never become Ready keeps the request by heartbeats
// and says why, rather than removing the only Ready pod; when the requester
// withdraws, the Deployment is scaled back and the pod's deletion cost left
// as it was.
func TestSurgeWaitsForAReadyReplacementAndRevertsOnWithdrawal(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "surge-revert.e2e.example.com"
	startOwnSurgeInterceptor(t, ns, name)
	only := f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "db", 1, name, nil)
	original := f.PodsOf(t, ns, "db")[0]
	// The pool's only node is cordoned: the replacement cannot be scheduled.
	f.Cordon(t, only)
	nodeDrain := newRequester(t, "nodemaintenance.k8s.io")
	if _, err := nodeDrain.Request(ctx, &original); err != nil {
		t.Fatal(err)
	}
	waitForSurge(t, ns, "db", 2)
	uid := string(original.UID)
	er := f.WaitForRequest(t, ns, uid, "the surge to report the unschedulable replacement", func(er *v1alpha1.EvictionRequest) error {
		if !strings.Contains(er.Status.Message, "not Ready: Pending, not scheduled") || er.Status.ExpectedInterceptorFinishTime == nil {
			return fmt.Errorf("status %+v", er.Status)
		}
		return nil
	})
	beat := er.Status.HeartbeatTime.Time
	f.WaitForRequest(t, ns, uid, "more heartbeats", func(er *v1alpha1.EvictionRequest) error {
		if !er.Status.HeartbeatTime.After(beat.Add(2 * time.Second)) {
			return fmt.Errorf("heartbeat %v", er.Status.HeartbeatTime)
		}
		return nil
	})
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, original.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the only Ready pod was removed: %v", err)
	}

	if _, err := nodeDrain.Withdraw(ctx, ns, original.UID); err != nil {
		t.Fatal(err)
	}
	f.WaitForCompletion(t, ns, uid, v1alpha1.CompleteReasonCanceled)
	f.WaitForReplicas(t, ns, "db", 1)
	pods := f.PodsOf(t, ns, "db")
	if len(pods) != 1 || pods[0].UID != original.UID {
		t.Fatalf("pods after the withdrawal: %v, want the original", framework.PodNames(pods))
	}
	for _, key := range []string{surge.DeletionCostAnnotation, surge.OriginalDeletionCostAnnotation, surge.MarkedByAnnotation} {
		if v, ok := pods[0].Annotations[key]; ok {
			t.Errorf("the original pod keeps annotation %s=%q", key, v)
		}
	}
	if events := f.EventReasons(t, ns, "Deployment", "db"); !slices.Contains(events, surge.EventSurgeReverted) {
		t.Errorf("Deployment events %v lack %s", events, surge.EventSurgeReverted)
	}
}

// Deployments the interceptor cannot help are passed on at once, with the
// reason in the message; the Eviction API path then applies.
func TestSurgePassesOnRecreateAndAutoscaledDeployments(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "recreate", 1, surge.DefaultName, func(d *appsv1.Deployment) {
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	})
	f.CreateDeployment(t, ns, "autoscaled", 1, surge.DefaultName, nil)
	if _, err := f.Kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "autoscaled"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "autoscaled"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 3,
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodeDrain := newRequester(t, "nodemaintenance.k8s.io")
	for app, want := range map[string]string{
		"recreate":   "Deployment recreate: its Recreate strategy replaces pods by deleting them first",
		"autoscaled": "Deployment autoscaled: HorizontalPodAutoscaler autoscaled owns its replica count",
	} {
		pod := f.PodsOf(t, ns, app)[0]
		if _, err := nodeDrain.Request(ctx, &pod); err != nil {
			t.Fatal(err)
		}
		f.WaitForCompletion(t, ns, string(pod.UID), v1alpha1.CompleteReasonPodDeleted)
		f.WaitForEvents(t, ns, "", string(pod.UID), interceptor.EventDeclined, coordinationcontroller.EventEvicted)
		declined := f.EventMessages(t, ns, "", string(pod.UID), interceptor.EventDeclined)
		if !strings.Contains(declined, want) {
			t.Errorf("%s: the interceptor declined with %q, want %q", app, declined, want)
		}
	}
}
