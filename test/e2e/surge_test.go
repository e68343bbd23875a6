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

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

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
	f.CheckSurgeReverted(t, ns, "db", original.UID)
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
