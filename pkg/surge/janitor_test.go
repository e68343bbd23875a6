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

package surge

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
)

// startSurger returns a Surger named name over the fake clientsets, its
// caches synced, and the context of the test; both stop with the test.
func startSurger(t *testing.T, name string, kube *kubefake.Clientset, evictionRequests *erfake.Clientset) (*Surger, context.Context) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(kube, 0)
	s := New(Config{
		Name: name, Kube: kube, EvictionRequests: evictionRequests, Informers: factory,
		Recorder: record.NewFakeRecorder(10), Clock: testingclock.NewFakeClock(time.Now()), CallTimeout: time.Second,
	})
	factory.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	if !s.WaitForCacheSync(ctx) {
		t.Fatal("caches did not sync")
	}
	return s, ctx
}

// Surge interceptors of several names share a cluster, and every janitor
// sees every surge in its namespaces: each undoes a surge or a lowered
// deletion cost only when the interceptor named on it no longer holds the
// pod's request (under Forbid, for a lowered cost), whoever that is.
func TestJanitorUndoesWhatItsInterceptorNoLongerHolds(t *testing.T) {
	const ours, theirs, gone = "surge-a.example.com", "surge-b.example.com", "surge-gone.example.com"
	surged := func(name, interceptor string, uid types.UID) *appsv1.Deployment {
		d := deployment(func(d *appsv1.Deployment) { d.Name, d.UID = name, types.UID(name) })
		d, err := applyState(d, &State{Interceptor: interceptor, OriginalReplicas: 1, Available: 1, Pods: map[types.UID]string{uid: string(uid)}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	marked := func(uid types.UID, by string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: string(uid), UID: uid, Annotations: map[string]string{
			DeletionCostAnnotation: lowestDeletionCost, OriginalDeletionCostAnnotation: "7", MarkedByAnnotation: by,
		}}}
	}
	heldBy := func(uid types.UID, interceptor string, policy v1alpha1.EvictionRequestCancellationPolicy) *v1alpha1.EvictionRequest {
		return &v1alpha1.EvictionRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: string(uid)},
			Status:     v1alpha1.EvictionRequestStatus{ActiveInterceptorName: ptr.To(interceptor), EvictionRequestCancellationPolicy: ptr.To(policy)},
		}
	}
	kube := kubefake.NewClientset(
		// No request: withdrawn.
		surged("web-ours", ours, "ours-0"), marked("ours-0", ours), marked("ours-1", ours),
		// Held by the other interceptor, surging or scaling back.
		surged("web-theirs", theirs, "theirs-0"), marked("theirs-0", theirs), marked("theirs-1", theirs),
		// Held by the other interceptor, but not under Forbid.
		marked("theirs-2", theirs),
		// Left by an interceptor no longer running.
		surged("web-gone", gone, "gone-0"), marked("gone-0", gone),
		// Left by an interceptor no longer running, whose pod the other
		// interceptor took over and marked in a surge of its own that
		// this cache does not show.
		surged("web-handed-over", gone, "handed-over-0"), marked("handed-over-0", theirs),
	)
	evictionRequests := erfake.NewClientset(
		heldBy("theirs-0", theirs, v1alpha1.Forbid), heldBy("theirs-1", theirs, v1alpha1.Forbid), heldBy("theirs-2", theirs, v1alpha1.Allow),
		heldBy("gone-0", ours, v1alpha1.Forbid), heldBy("handed-over-0", theirs, v1alpha1.Forbid),
	)
	s, ctx := startSurger(t, ours, kube, evictionRequests)

	s.cleanUp(ctx)

	for name, want := range map[string]int32{"web-ours": 1, "web-theirs": 2, "web-gone": 1, "web-handed-over": 1} {
		dep, err := kube.AppsV1().Deployments("shop").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, surging := dep.Annotations[StateAnnotation]
		if got := ptr.Deref(dep.Spec.Replicas, 0); got != want || surging != (want == 2) {
			t.Errorf("Deployment %s: %d replicas, surge annotation %v; want %d replicas, the surge kept only while its interceptor holds the request", name, got, surging, want)
		}
	}
	restored := map[string]string{DeletionCostAnnotation: "7"}
	for name, want := range map[string]map[string]string{
		"ours-0":   restored,
		"ours-1":   restored,
		"theirs-0": marked("theirs-0", theirs).Annotations,
		"theirs-1": marked("theirs-1", theirs).Annotations,
		"theirs-2": restored,
		"gone-0":   restored,
		// Its removal by the other interceptor is in flight.
		"handed-over-0": marked("handed-over-0", theirs).Annotations,
	} {
		pod, err := kube.CoreV1().Pods("shop").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, pod.Annotations); diff != "" {
			t.Errorf("annotations of pod %s (-want +got):\n%s", name, diff)
		}
	}
}

// Two janitors (or a janitor and a handler) may write one Deployment at
// once: the conflict is no error, the next round looks again.
func TestJanitorConflictIsLookedAtAgain(t *testing.T) {
	dep, err := applyState(deployment(), &State{Interceptor: "gone.example.com", OriginalReplicas: 1, Available: 1, Pods: map[types.UID]string{"p": "p"}})
	if err != nil {
		t.Fatal(err)
	}
	kube := kubefake.NewClientset(dep, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p", UID: "p"}})
	kube.PrependReactor("update", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(appsv1.Resource("deployments"), dep.Name, errors.New("written meanwhile"))
	})
	s, ctx := startSurger(t, "surge-a.example.com", kube, erfake.NewClientset())
	state, err := currentState(dep)
	if err != nil {
		t.Fatal(err)
	}
	if left, err := s.cleanUpDeployment(ctx, dep, state); left != 1 || err != nil {
		t.Errorf("cleanUpDeployment() = %d, %v; want 1 pod left for the next round and no error", left, err)
	}
}

// A mark records the cost to restore. Taking over another interceptor's
// mark keeps the cost it recorded, also when a janitor restored the pod
// between the read of the mark and the take-over: the lowest cost is never
// left on a pod without the cost to restore.
func TestMarkForRemovalKeepsTheCostToRestore(t *testing.T) {
	const ours, theirs = "surge-a.example.com", "surge-b.example.com"
	pod := func(annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "web-0", Annotations: annotations}}
	}
	markedBy := func(name string) map[string]string {
		return map[string]string{DeletionCostAnnotation: lowestDeletionCost, OriginalDeletionCostAnnotation: "7", MarkedByAnnotation: name}
	}
	for _, tc := range []struct {
		name           string
		stored, cached map[string]string
	}{
		{"an unmarked pod", map[string]string{DeletionCostAnnotation: "7"}, map[string]string{DeletionCostAnnotation: "7"}},
		{"a pod marked by another interceptor", markedBy(theirs), markedBy(theirs)},
		{"a pod marked by another interceptor, restored since", map[string]string{DeletionCostAnnotation: "7"}, markedBy(theirs)},
		{"a pod marked by this interceptor", markedBy(ours), markedBy(ours)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewClientset(pod(tc.stored))
			s, ctx := startSurger(t, ours, kube, erfake.NewClientset())
			if err := s.markForRemoval(ctx, pod(tc.cached)); err != nil {
				t.Fatal(err)
			}
			got, err := kube.CoreV1().Pods("shop").Get(ctx, "web-0", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(markedBy(ours), got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}
