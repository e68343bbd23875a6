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
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// Flow 1: a pod without interceptors is evicted through the Eviction API;
// the requester learns how the request ended.
func TestControllerEvictsAPodWithoutInterceptors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), framework.DefaultTimeout)
	defer cancel()
	ns := f.NewNamespace(t)
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{})
	nodeDrain := newRequester(t, "nodemaintenance.k8s.io")
	if _, err := nodeDrain.Request(ctx, pod); err != nil {
		t.Fatal(err)
	}
	result, err := nodeDrain.Wait(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if result.Reason != v1alpha1.CompleteReasonPodDeleted || !result.Evicted() {
		t.Errorf("Wait() = %+v, want PodDeleted", result)
	}
	f.WaitForPodGone(t, ns, pod.Name)
	f.WaitForEvents(t, ns, "", string(pod.UID), coordinationcontroller.EventEvicted, coordinationcontroller.EventCompleted)
	if attempts, granted := f.AuditedEvictions(t, ns, pod.Name); attempts != 1 || granted != 1 {
		t.Errorf("kube-apiserver saw %d evictions of %s (%d granted), want exactly one", attempts, pod.Name, granted)
	}
}

// Flow 2: three interceptors. The highest index, an SDK interceptor, is
// selected first and works with heartbeats and an estimate, then completes
// its part; the next one has crashed long ago (its last heartbeat is older
// than the deadline) and is passed over; the last, an SDK interceptor,
// declines. The pod is then evicted.
func TestControllerHandsOffBetweenInterceptors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const (
		fallback = "fallback.rescue.example.com"
		operator = "operator.fruit-company.com"
		migrator = "migrator.fruit-company.com"
	)
	finish := time.Now().Add(time.Hour).Truncate(time.Second)
	migrated := make(chan struct{})
	f.StartInterceptor(t, ns, migrator, func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		if err := req.Report(ctx, interceptor.Progress{Message: "migrating data", ExpectedFinishTime: &finish}); err != nil {
			return interceptor.Result{}, err
		}
		select {
		case <-migrated:
			return interceptor.Complete("data migrated"), nil
		case <-ctx.Done():
			return interceptor.Result{}, ctx.Err()
		}
	})
	f.StartInterceptor(t, ns, fallback, declines)
	pod := f.CreatePod(t, ns, "db-0", framework.PodOptions{Interceptors: []string{fallback, operator, migrator}})
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, pod); err != nil {
		t.Fatal(err)
	}
	name := string(pod.UID)

	f.WaitForRequest(t, ns, name, "the migrator's progress", func(er *v1alpha1.EvictionRequest) error {
		if ptr.Deref(er.Status.ActiveInterceptorName, "") != migrator || er.Status.Message != "migrating data" ||
			er.Status.ExpectedInterceptorFinishTime == nil || !er.Status.ExpectedInterceptorFinishTime.Time.Equal(finish) {
			return fmt.Errorf("status %+v", er.Status)
		}
		return nil
	})
	close(migrated)

	// The operator takes over with the fields reset, but it crashed long
	// ago and never answers: its last heartbeat is older than the deadline.
	active := f.WaitUntilActive(t, ns, name, operator)
	if active.Status.ActiveInterceptorCompleted || active.Status.ExpectedInterceptorFinishTime != nil || active.Status.HeartbeatTime == nil ||
		!strings.Contains(active.Status.Message, operator+" replaced "+migrator+", which completed") {
		t.Errorf("after the hand-off to the operator: %+v", active.Status)
	}
	deadline := time.Duration(*active.Spec.HeartbeatDeadlineSeconds) * time.Second
	setStatus(t, ns, name, func(er *v1alpha1.EvictionRequest) {
		er.Status.HeartbeatTime = ptr.To(metav1.NewTime(time.Now().Add(-deadline - time.Minute).Truncate(time.Second)))
	})

	// The fallback is passed the request because the operator timed out,
	// and declines. No interceptor is left: the pod is evicted.
	f.WaitForPodGone(t, ns, pod.Name)
	f.WaitForCompletion(t, ns, name, v1alpha1.CompleteReasonPodDeleted)
	f.WaitForEvents(t, ns, "", name,
		coordinationcontroller.EventInterceptorSelected, interceptor.EventStarted, interceptor.EventCompleted,
		coordinationcontroller.EventInterceptorHandedOff, coordinationcontroller.EventInterceptorTimedOut, interceptor.EventDeclined,
		coordinationcontroller.EventEvicted, coordinationcontroller.EventCompleted)
	if attempts, granted := f.AuditedEvictions(t, ns, pod.Name); attempts != 1 || granted != 1 {
		t.Errorf("kube-apiserver saw %d evictions (%d granted), want one", attempts, granted)
	}
}

// Flow 3: a PodDisruptionBudget blocks the eviction; the controller counts
// the failures and backs off, and evicts once the budget allows it.
func TestControllerBacksOffWhileAPodDisruptionBudgetBlocks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := f.CreatePod(t, ns, "db-0", framework.PodOptions{Labels: map[string]string{"app": "db"}})
	pdb, err := f.Kube.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// kube-controller-manager's disruption controller computes the budget.
	framework.Eventually(t, time.Minute, "the PDB status", func(ctx context.Context) error {
		pdb, err = f.Kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.ExpectedPods != 1 {
			return fmt.Errorf("status %+v", pdb.Status)
		}
		return nil
	})

	er, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	var delays []time.Duration
	retryIn := regexp.MustCompile(`retrying in ([0-9a-z.]+):`)
	f.WaitForRequest(t, ns, er.Name, "three failed evictions", func(er *v1alpha1.EvictionRequest) error {
		if m := retryIn.FindStringSubmatch(er.Status.Message); m != nil {
			d, _ := time.ParseDuration(m[1])
			if len(delays) == 0 || delays[len(delays)-1] != d {
				delays = append(delays, d)
			}
		}
		if er.Status.PodEvictionStatus == nil || er.Status.PodEvictionStatus.FailedAPIEvictionCounter < 3 {
			return fmt.Errorf("status %+v", er.Status)
		}
		return nil
	})
	for i := 1; i < len(delays); i++ {
		if delays[i] < delays[i-1] {
			t.Errorf("the backoff shrank: %v", delays)
		}
	}
	if len(delays) >= 2 && delays[len(delays)-1] == delays[0] {
		t.Errorf("the backoff did not grow: %v", delays)
	}
	if attempts, granted := f.AuditedEvictions(t, ns, pod.Name); attempts < 3 || granted != 0 {
		t.Errorf("kube-apiserver saw %d evictions (%d granted), want at least 3 refused", attempts, granted)
	}
	f.WaitForEvents(t, ns, "", er.Name, coordinationcontroller.EventEvictionFailed)

	// The budget is relaxed: the next attempt succeeds.
	f.RelaxPDB(t, ns, pdb.Name)
	f.WaitForPodGone(t, ns, pod.Name)
	done := f.WaitForCompletion(t, ns, er.Name, v1alpha1.CompleteReasonPodDeleted)
	if done.Status.PodEvictionStatus.FailedAPIEvictionCounter < 3 {
		t.Errorf("the failure counter went back to %d", done.Status.PodEvictionStatus.FailedAPIEvictionCounter)
	}
	if _, granted := f.AuditedEvictions(t, ns, pod.Name); granted != 1 {
		t.Errorf("kube-apiserver granted %d evictions, want one", granted)
	}
}

// Flow 5: DaemonSet and mirror pods are never evicted through the API.
func TestControllerNeverEvictsDaemonSetOrMirrorPods(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	daemonPod, mirrorPod := f.SkippedPods(t, ns, f.NodeNames[0])

	nodeDrain := newRequester(t, "nodemaintenance.k8s.io")
	for kind, pod := range map[string]*corev1.Pod{"DaemonSet": daemonPod, "mirror": mirrorPod} {
		er, err := nodeDrain.Request(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		f.WaitForRequest(t, ns, er.Name, "the controller to refuse the "+kind+" pod", func(er *v1alpha1.EvictionRequest) error {
			if !strings.Contains(er.Status.Message, "is a "+kind+" pod") {
				return fmt.Errorf("message %q", er.Status.Message)
			}
			return nil
		})
		f.WaitForEvents(t, ns, "", er.Name, coordinationcontroller.EventEvictionNotSupported)
		if attempts, _ := f.AuditedEvictions(t, ns, pod.Name); attempts != 0 {
			t.Errorf("the %s pod was evicted through the API %d times", kind, attempts)
		}
		if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("the %s pod is gone: %v", kind, err)
		}
	}
}

// A pod that is already terminating is not evicted through the API: its
// request waits for the pod to be gone. The pod is bound to a node no kubelet
// (or kwok) runs, so its graceful deletion never finishes on its own.
func TestControllerNeverEvictsATerminatingPod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := podWithoutKubelet(t, ns)
	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	er, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	f.WaitForRequest(t, ns, er.Name, "the controller to wait for the terminating pod", func(er *v1alpha1.EvictionRequest) error {
		if !strings.Contains(er.Status.Message, "is terminating") {
			return fmt.Errorf("message %q", er.Status.Message)
		}
		return nil
	})
	if attempts, _ := f.AuditedEvictions(t, ns, pod.Name); attempts != 0 {
		t.Errorf("the terminating pod was evicted through the API %d times", attempts)
	}

	// Once the pod is gone, the request completes.
	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	f.WaitForCompletion(t, ns, er.Name, v1alpha1.CompleteReasonPodDeleted)
}

// A pod the controller evicted that takes its time to terminate: its
// request says so, and completes once the pod is gone.
func TestControllerSaysItsEvictionStartedATerminatingPod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := podWithoutKubelet(t, ns)
	er, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	f.WaitForRequest(t, ns, er.Name, "the controller to say its eviction started the pod's termination", func(er *v1alpha1.EvictionRequest) error {
		if !strings.Contains(er.Status.Message, "was evicted through the Eviction API; waiting for it to terminate") {
			return fmt.Errorf("message %q", er.Status.Message)
		}
		return nil
	})
	f.WaitForEvents(t, ns, "", string(pod.UID), coordinationcontroller.EventEvicted)
	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	f.WaitForCompletion(t, ns, er.Name, v1alpha1.CompleteReasonPodDeleted)
	if attempts, granted := f.AuditedEvictions(t, ns, pod.Name); attempts != 1 || granted != 1 {
		t.Errorf("kube-apiserver saw %d evictions of %s (%d granted), want exactly one", attempts, pod.Name, granted)
	}
}

// A pod evicted and gone within a second costs its request one status
// write, the completion: the controller says a pod is terminating only
// once it has been for a second. The test removes the pod as soon as its
// termination shows, as a kubelet ends a pod with nothing to stop; when a
// loaded machine made it later than the second, the two writes are
// logged, not failed.
func TestControllerCompletesARequestWhosePodWentAtOnceInOneStatusWrite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := podWithoutKubelet(t, ns)
	er, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	f.WaitForPod(t, ns, pod.Name, "the eviction to start the pod's termination", func(p *corev1.Pod) error {
		if p.DeletionTimestamp == nil {
			return fmt.Errorf("not terminating")
		}
		return nil
	})
	deleted := time.Now()
	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	statuses := f.RequestStatusesUntil(t, er, "the request to complete", coordinationutil.IsComplete)
	var messages []string
	for _, status := range statuses {
		messages = append(messages, status.Message)
	}
	completed := coordinationutil.CompletionReason(&v1alpha1.EvictionRequest{Status: statuses[len(statuses)-1]}) == v1alpha1.CompleteReasonPodDeleted
	// On a loaded machine the test's own delete can come later than the
	// controller's second: then the pod did not go at once, and the
	// controller rightly said first that it was terminating.
	after := deleted.Sub(grantedEviction(t, ns, pod.Name))
	switch {
	case completed && len(statuses) == 1:
	case completed && after >= coordinationcontroller.EvictedMessageDelay && len(statuses) == 2 && strings.Contains(messages[0], "waiting for it to terminate"):
		t.Logf("the test deleted the pod %v after its eviction, past the controller's %v: two status writes (%q)",
			after, coordinationcontroller.EvictedMessageDelay, messages)
	default:
		t.Errorf("the request's status was written %d times (messages %q), want once: complete, PodDeleted", len(statuses), messages)
	}
	f.WaitForEvents(t, ns, "", string(pod.UID), coordinationcontroller.EventEvicted, coordinationcontroller.EventCompleted)
}

// grantedEviction is when kube-apiserver granted the eviction of pod
// ns/name, as its audit log says.
func grantedEviction(t *testing.T, ns, name string) time.Time {
	t.Helper()
	for _, e := range f.AuditedEvictionsOf(t, ns, name) {
		if e.Code == http.StatusCreated {
			return e.Time
		}
	}
	t.Fatalf("kube-apiserver's audit log has no granted eviction of pod %s/%s", ns, name)
	return time.Time{}
}

// podWithoutKubelet creates a pod bound to a node no kubelet runs: deleted
// gracefully, it stays terminating until the test deletes it at once.
func podWithoutKubelet(t *testing.T, ns string) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	node, err := f.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "no-kubelet-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Kube.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	pod, err := f.Kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stuck-0"},
		Spec:       corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.Kube.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	return pod
}
