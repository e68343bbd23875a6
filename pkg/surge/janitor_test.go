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
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
)

// janitorPeriod is how often the janitor of the tests reads the requests
// of the surges and marks that last.
const janitorPeriod = 10 * time.Second

// runJanitor runs the janitor of a Surger named ours over the fake
// clientsets, on informers it starts, in the test's synctest bubble, until
// the test ends.
func runJanitor(t *testing.T, kube *kubefake.Clientset, evictionRequests *erfake.Clientset) context.Context {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	factory := cachetest.KubeInformers(kube, CacheTransform)
	s := New(Config{
		Name: ours, Kube: kube, EvictionRequests: evictionRequests, Informers: factory,
		Recorder: record.NewFakeRecorder(100), Clock: testingclock.NewFakeClock(start), PollInterval: poll, CallTimeout: time.Second,
	})
	factory.Start(ctx.Done())
	if !s.WaitForCacheSync(ctx) {
		t.Fatal("caches did not sync")
	}
	done := make(chan error, 1)
	go func() { done <- s.RunJanitor(ctx, janitorPeriod) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		factory.Shutdown()
	})
	return ctx
}

// settle lets the informers deliver their events and the janitor act on
// them, in virtual time.
func settle() {
	time.Sleep(time.Second)
	synctest.Wait()
}

// Surge interceptors of several names share a cluster, and every janitor
// sees every surge in its namespaces: each undoes a surge or a lowered
// deletion cost only when the interceptor named on it no longer holds the
// pod's request (under Forbid, for a lowered cost), whoever that is.
func TestJanitorUndoesWhatItsInterceptorNoLongerHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		surged := func(name, interceptor string, pod *corev1.Pod) *appsv1.Deployment {
			return surging(t, wrappers.MakeDeployment(name).Obj(), interceptor, pod)
		}
		p := func(name string) *corev1.Pod { return wrappers.MakePod(name).Obj() }
		kube := kubefake.NewClientset(
			// No request: withdrawn.
			surged("web-ours", ours, p("ours-0")), markedBy(p("ours-0"), ours), markedBy(p("ours-1"), ours),
			// Held by the other interceptor, surging or scaling back.
			surged("web-theirs", theirs, p("theirs-0")), markedBy(p("theirs-0"), theirs), markedBy(p("theirs-1"), theirs),
			// Held by the other interceptor, but not under Forbid.
			markedBy(p("theirs-2"), theirs),
			// Left by an interceptor no longer running.
			surged("web-gone", gone, p("gone-0")), markedBy(p("gone-0"), gone),
			// Left by an interceptor no longer running, whose pod the
			// other interceptor took over and marked in a surge of its own
			// that this cache does not show.
			surged("web-handed-over", gone, p("handed-over-0")), markedBy(p("handed-over-0"), theirs),
		)
		evictionRequests := erfake.NewClientset(
			heldBy(p("theirs-0"), theirs, v1alpha1.Forbid), heldBy(p("theirs-1"), theirs, v1alpha1.Forbid), heldBy(p("theirs-2"), theirs, v1alpha1.Allow),
			heldBy(p("gone-0"), ours, v1alpha1.Forbid), heldBy(p("handed-over-0"), theirs, v1alpha1.Forbid),
		)
		ctx := runJanitor(t, kube, evictionRequests)
		settle()

		for name, want := range map[string]int32{"web-ours": 1, "web-theirs": 2, "web-gone": 1, "web-handed-over": 1} {
			dep, err := kube.AppsV1().Deployments(wrappers.DefaultNamespace).Get(ctx, name, metav1.GetOptions{})
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
			"theirs-0": markedBy(p("theirs-0"), theirs).Annotations,
			"theirs-1": markedBy(p("theirs-1"), theirs).Annotations,
			"theirs-2": restored,
			"gone-0":   restored,
			// Its removal by the other interceptor is in flight.
			"handed-over-0": markedBy(p("handed-over-0"), theirs).Annotations,
		} {
			pod, err := kube.CoreV1().Pods(wrappers.DefaultNamespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, pod.Annotations); diff != "" {
				t.Errorf("annotations of pod %s (-want +got):\n%s", name, diff)
			}
		}

		// The other interceptor's request is withdrawn: the janitor, which
		// reads the requests of what lasts each period, undoes its surge.
		if err := evictionRequests.CoordinationV1alpha1().EvictionRequests(wrappers.DefaultNamespace).Delete(ctx, "uid-theirs-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(janitorPeriod)
		settle()
		if dep, _ := kube.AppsV1().Deployments(wrappers.DefaultNamespace).Get(ctx, "web-theirs", metav1.GetOptions{}); *dep.Spec.Replicas != 1 {
			t.Errorf("the surge of a withdrawn request was not undone within a period: %d replicas", *dep.Spec.Replicas)
		}
	})
}

// The pods a surge of this interceptor marked count as replaced when they
// are deleted; the pods of others do not.
func TestJanitorCountsThePodsItsSurgesReplaced(t *testing.T) {
	metrics.Register()
	synctest.Test(t, func(t *testing.T) {
		mine, theirsPod := markedBy(wrappers.MakePod("web-0").Obj(), ours), markedBy(wrappers.MakePod("web-1").Obj(), theirs)
		kube := kubefake.NewClientset(mine, theirsPod)
		evictionRequests := erfake.NewClientset(heldBy(mine, ours, v1alpha1.Forbid), heldBy(theirsPod, theirs, v1alpha1.Forbid))
		ctx := runJanitor(t, kube, evictionRequests)
		settle()
		before, err := testutil.GetCounterMetricValue(metrics.Completed)
		if err != nil {
			t.Fatal(err)
		}
		for _, pod := range []*corev1.Pod{mine, theirsPod} {
			if err := kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		settle()
		if after, _ := testutil.GetCounterMetricValue(metrics.Completed); after != before+1 {
			t.Errorf("surges_completed_total went from %v to %v, want one more", before, after)
		}
	})
}

// Two janitors (or a janitor and a handler) may write one Deployment at
// once: the conflict is no error, the next round looks again.
func TestJanitorConflictIsLookedAtAgain(t *testing.T) {
	f := newFixture(t)
	dep := surging(t, wrappers.MakeDeployment("web").Obj(), gone, wrappers.MakePod("p").UID("p").Obj())
	f.add(dep, wrappers.MakePod("p").UID("p").Obj())
	f.kube.PrependReactor("update", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(appsv1.Resource("deployments"), dep.Name, errors.New("written meanwhile"))
	})
	state, err := currentState(dep)
	if err != nil {
		t.Fatal(err)
	}
	if left, err := f.surger.cleanUpDeployment(f.ctx, dep, state); left != 1 || err != nil {
		t.Errorf("cleanUpDeployment() = %d, %v; want 1 pod left for the next round and no error", left, err)
	}
}

// A mark records the cost to restore. Taking over another interceptor's
// mark keeps the cost it recorded, also when a janitor restored the pod
// between the read of the mark and the take-over: the lowest cost is never
// left on a pod without the cost to restore.
func TestMarkForRemovalKeepsTheCostToRestore(t *testing.T) {
	withCost := func(annotations map[string]string) *corev1.Pod {
		pod := wrappers.MakePod("web-0").Obj()
		pod.Annotations = annotations
		return pod
	}
	restored := map[string]string{DeletionCostAnnotation: "7"}
	markedAs := func(name string) map[string]string {
		return markedBy(wrappers.MakePod("web-0").Obj(), name).Annotations
	}
	for _, tc := range []struct {
		name           string
		stored, cached map[string]string
	}{
		{"an unmarked pod", restored, restored},
		{"a pod marked by another interceptor", markedAs(theirs), markedAs(theirs)},
		{"a pod marked by another interceptor, restored since", restored, markedAs(theirs)},
		{"a pod marked by this interceptor", markedAs(ours), markedAs(ours)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.add(withCost(tc.stored))
			if err := f.surger.markForRemoval(f.ctx, withCost(tc.cached)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(markedAs(ours), f.pod("web-0").Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}
