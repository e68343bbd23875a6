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

package ha

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/stepaside"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// lifecycleArgs are the flags the suite's evictionrequest-controller runs
// with (localcluster's beside the server).
var lifecycleArgs = []string{"--v=2"}

// heldResponder runs a responder of ns that holds the Evictions it is
// given until release is closed, then completes them.
func heldResponder(t *testing.T, ns, name string, release <-chan struct{}) {
	t.Helper()
	f.StartResponder(t, ns, name, func(ctx context.Context, _ *interceptor.Request) (interceptor.Result, error) {
		select {
		case <-release:
			return interceptor.Complete("released by the test"), nil
		case <-ctx.Done():
			return interceptor.Result{}, ctx.Err()
		}
	})
}

// podWithResponder is a pod of ns that lists responder.
func podWithResponder(t *testing.T, ns, name, responder string) *corev1.Pod {
	t.Helper()
	return f.CreatePod(t, ns, name, framework.PodOptions{Mutate: func(p *corev1.Pod) {
		p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(responder, 5000)}
	}})
}

// writesDuring counts the writes of the Eviction ev during d.
func writesDuring(t *testing.T, ev *lifecyclev1alpha1.Eviction, d time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	w, err := f.Kube.LifecycleV1alpha1().Evictions(ev.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", ev.Name).String(), ResourceVersion: ev.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	writes := 0
	for e := range w.ResultChan() {
		if e.Type == watch.Modified {
			writes++
		}
	}
	return writes
}

// restoreOurControllers leaves the cluster as the suite runs it when the
// test ends: Kubernetes' controllers stopped, evictionrequest-controller's
// running in full.
func restoreOurControllers(t *testing.T) {
	t.Cleanup(func() {
		f.StopUpstreamControllers()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := handBackToOurs(ctx); err != nil {
			t.Errorf("handing the controllers back to evictionrequest-controller: %v", err)
		}
	})
}

// handBackToOurs is what an admin does once kube-controller-manager no
// longer runs its controllers (docs/upstream.md): delete the record of
// ours stepping aside, if any, and restart ours in full.
func handBackToOurs(ctx context.Context) error {
	err := f.Kube.CoreV1().ConfigMaps(artifacts.Namespace).Delete(ctx, stepaside.RecordName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return f.RestartLifecycleControllerWith(ctx, lifecycleArgs...)
}

// With Kubernetes 1.38's controllers started beside ours, as a cluster
// whose feature gates turn EvictionRequestAPI on everywhere has them, the
// two never fight: an Eviction held by a responder that never answers is
// written no more than a few times in the 30 s that follow, ours of each
// job step aside once kube-controller-manager's of that job writes (its
// metric and an event say so: the evictor's at the first eviction that
// reaches the evictor's turn), and Kubernetes' go on alone.
func TestTheLifecycleControllersNeverFight(t *testing.T) {
	restoreOurControllers(t)
	ns := f.NewNamespace(t)
	const holder = "e2e.example.com/never-answers"
	pod := podWithResponder(t, ns, "held-0", holder)
	framework.RequestEviction(t, f.NewLifecycleRequester(t, "e2e.example.com/never-fight"), pod)
	ev := f.WaitForEviction(t, pod, "the held responder's turn", framework.ResponderIs(holder, lifecyclev1alpha1.ResponderStateActive))

	if err := f.StartUpstreamControllers(t.Context()); err != nil {
		t.Fatal(err)
	}
	if writes := writesDuring(t, ev, 30*time.Second); writes > 4 {
		t.Errorf("the held Eviction was written %d times in the 30 s after Kubernetes' controllers started beside ours, want a few at most", writes)
	}
	waitSteppedAside(t, stepaside.EvictionRequestController)
	// The held Eviction never reaches the evictor's turn: others do.
	evictUntilSteppedAside(t, ns, "plain", stepaside.ImperativeEvictionResponder)
	// The record names, for each, the write it stepped aside at, and the
	// event is on that object: any Eviction or request Kubernetes'
	// controllers wrote first, this test's or one another test left in
	// flight.
	recorded := waitRecorded(t, stepaside.Counterparts...)
	for _, c := range stepaside.Counterparts {
		d := recorded[c]
		kind, key, _ := strings.Cut(d.Object, " ")
		writtenNS, writtenName, _ := strings.Cut(key, "/")
		if writtenName == "" || d.Place == "" {
			t.Fatalf("the record names no write for %s: %+v", c, d)
		}
		// kube-apiserver takes no event in a namespace being deleted (one
		// another test left, whose Evictions were still in flight).
		if writtenNS == ns {
			f.WaitForEvents(t, writtenNS, kind, writtenName, stepaside.EventStepAside)
		} else if got, err := f.Kube.CoreV1().Namespaces().Get(t.Context(), writtenNS, metav1.GetOptions{}); err == nil && got.Status.Phase == corev1.NamespaceActive {
			f.WaitForEvents(t, writtenNS, kind, writtenName, stepaside.EventStepAside)
		} else {
			t.Logf("%s stepped aside at a write in namespace %s, being deleted: no event there to look for", c, writtenNS)
		}
	}

	t.Run("and stay aside after a restart", func(t *testing.T) {
		ctx := t.Context()
		// The held Eviction is still in progress, and Kubernetes'
		// controllers write only when something changes: a restarted
		// controller that did not know it had stepped aside would write
		// that Eviction at once, and race for the next one.
		ourWrites := f.WritesOfOurControllers(t, ns)
		if err := f.RestartLifecycleControllerWith(ctx, lifecycleArgs...); err != nil {
			t.Fatal(err)
		}
		waitSteppedAside(t, stepaside.Counterparts...)
		pod := f.CreatePod(t, ns, "after-restart-0", framework.PodOptions{})
		framework.RequestEviction(t, f.NewLifecycleRequester(t, "e2e.example.com/after-restart"), pod)
		// The pod gone is what this test is about; Kubernetes' own
		// conditions are not (v1.38.0-beta.0's controller once left this
		// Eviction "waiting for the last active responder update" after
		// its evictor had evicted the pod, with nothing of ours running).
		f.WaitForPodGone(t, ns, pod.Name)
		if writes := ourWrites(); len(writes) > 0 {
			t.Errorf("evictionrequest-controller's own controllers wrote after restarting beside Kubernetes': %v", writes)
		}
		if _, granted := f.AuditedEvictions(t, ns, pod.Name); granted != 1 {
			t.Errorf("%d evictions of the pod granted, want 1", granted)
		}
	})
}

// Requests in flight when our controllers hand over to Kubernetes' (the
// upgrade to 1.38: ours restarted for the actors only, then
// kube-controller-manager's started), and back (kube-controller-manager's
// stopped, ours restarted in full), finish: the responder whose turn it was
// completes it under the new controllers, the pod is evicted once.
func TestTheLifecycleControllersHandOverBothWays(t *testing.T) {
	restoreOurControllers(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name, responder string
		handOver        func(t *testing.T)
	}{
		{"to Kubernetes' controllers", "e2e.example.com/hand-over-to-kubernetes", func(t *testing.T) {
			if err := f.RestartLifecycleControllerWith(ctx, append(lifecycleArgs, localcluster.ActorsOnly)...); err != nil {
				t.Fatal(err)
			}
			if err := f.StartUpstreamControllers(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"back to ours", "e2e.example.com/hand-over-back", func(t *testing.T) {
			f.StopUpstreamControllers()
			if err := handBackToOurs(ctx); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := f.NewNamespace(t)
			responder := tc.responder
			release := make(chan struct{})
			heldResponder(t, ns, responder, release)
			pod := podWithResponder(t, ns, "db-0", responder)
			// The request outlives the pod, and its Eviction with it, to be read.
			framework.RequestEviction(t, f.NewLifecycleRequester(t, "e2e.example.com/hand-over", requester.Options{KeepAfterPod: true}), pod)
			f.WaitForEviction(t, pod, "the responder's turn", framework.ResponderIs(responder, lifecyclev1alpha1.ResponderStateActive))

			tc.handOver(t)
			close(release)
			f.WaitForEviction(t, pod, "the pod evicted after the hand-over",
				framework.ConditionIs(lifecyclev1alpha1.EvictionConditionTargetEvicted, lifecyclev1alpha1.EvictionConditionReasonPodDeleted))
			f.WaitForEviction(t, pod, "the responder's turn completed", framework.ResponderIs(responder, lifecyclev1alpha1.ResponderStateCompleted))
			if _, granted := f.AuditedEvictions(t, ns, pod.Name); granted != 1 {
				t.Errorf("%d evictions of the pod granted, want 1", granted)
			}
		})
	}
}

// steppedAsideSample is the sample of the metric of ours stepping aside
// for c.
func steppedAsideSample(c stepaside.Counterpart) string {
	return fmt.Sprintf(`evictionrequest_lifecycle_controller_stepped_aside{controller="%s"}`, c)
}

// waitSteppedAside waits until the metric says ours stepped aside for each
// of counterparts.
func waitSteppedAside(t *testing.T, counterparts ...stepaside.Counterpart) framework.MetricSamples {
	t.Helper()
	var samples framework.MetricSamples
	for _, c := range counterparts {
		samples = framework.WaitForSample(t, func() framework.MetricSamples {
			return framework.ScrapeProcessMetrics(t, f.LifecycleController())
		}, steppedAsideSample(c), 1)
	}
	return samples
}

// evictUntilSteppedAside evicts plain pods of ns, named prefix-0,
// prefix-1..., one after the other until ours of c stepped aside. Ours and
// kube-controller-manager's race for each eviction until the guard sees a
// write of theirs, and ours may win a few: the evictor that completes an
// eviction first leaves the other nothing to write.
func evictUntilSteppedAside(t *testing.T, ns, prefix string, c stepaside.Counterpart) {
	t.Helper()
	n := 0
	framework.Eventually(t, 3*time.Minute, "ours of "+string(c)+" to step aside", func(context.Context) error {
		pod := f.CreatePod(t, ns, fmt.Sprintf("%s-%d", prefix, n), framework.PodOptions{})
		n++
		framework.RequestEviction(t, f.NewLifecycleRequester(t, "e2e.example.com/"+prefix), pod)
		f.WaitForPodGone(t, ns, pod.Name)
		samples := framework.ScrapeProcessMetrics(t, f.LifecycleController())
		if v, _ := samples.Value(steppedAsideSample(c)); v != 1 {
			return fmt.Errorf("ours of %s still run after %d evictions", c, n)
		}
		return nil
	})
}

// waitRecorded waits until the step-aside record holds a decision for each
// of counterparts, and returns its decisions.
func waitRecorded(t *testing.T, counterparts ...stepaside.Counterpart) map[stepaside.Counterpart]stepaside.Decision {
	t.Helper()
	rec := &stepaside.Record{ConfigMaps: f.Kube.CoreV1(), Namespace: artifacts.Namespace, CallTimeout: 10 * time.Second}
	var loaded *stepaside.Loaded
	framework.Eventually(t, time.Minute, fmt.Sprintf("the record of ours stepping aside for %v", counterparts), func(ctx context.Context) (err error) {
		if loaded, err = rec.Load(ctx); err != nil {
			return err
		}
		for _, c := range counterparts {
			if loaded == nil || loaded.Decisions[c] == (stepaside.Decision{}) {
				return fmt.Errorf("%s is not recorded: %+v", c, loaded)
			}
		}
		return nil
	})
	return loaded.Decisions
}

// Kube-controller-manager may run one of its two controllers of
// lifecycle.k8s.io only (its --controllers): ours of that one steps aside,
// ours of the other goes on, and the flows work on the two side by side.
// An Eviction after the step-aside is written by kube-controller-manager's
// controller and by ours of the other job, and by nothing else: no fight,
// and nobody missing.
func TestKubeControllerManagerRunningOneControllerStepsOursOfThatOneAside(t *testing.T) {
	managers := map[stepaside.Counterpart]string{
		stepaside.EvictionRequestController:   lifecycle.FieldManager,
		stepaside.ImperativeEvictionResponder: evictor.FieldManager,
	}
	for _, upstream := range stepaside.Counterparts {
		t.Run(string(upstream), func(t *testing.T) {
			restoreOurControllers(t)
			ns := f.NewNamespace(t)
			if err := f.StartUpstreamControllers(t.Context(), "--controllers="+string(upstream)); err != nil {
				t.Fatal(err)
			}
			evictUntilSteppedAside(t, ns, "warm-up", upstream)
			other := stepaside.ImperativeEvictionResponder
			if upstream == other {
				other = stepaside.EvictionRequestController
			}
			samples := framework.ScrapeProcessMetrics(t, f.LifecycleController())
			if v := samples.Sample(t, steppedAsideSample(other)); v != 0 {
				t.Errorf("ours of %s stepped aside too, with nobody else running it", other)
			}
			if recorded := waitRecorded(t, upstream); recorded[other] != (stepaside.Decision{}) {
				t.Errorf("the record holds %s too: %+v", other, recorded)
			}

			pod := f.CreatePod(t, ns, "after", framework.PodOptions{})
			framework.RequestEviction(t, f.NewLifecycleRequester(t, "e2e.example.com/after", requester.Options{KeepAfterPod: true}), pod)
			ev := f.WaitForEviction(t, pod, "the pod evicted",
				framework.ConditionIs(lifecyclev1alpha1.EvictionConditionTargetEvicted, lifecyclev1alpha1.EvictionConditionReasonPodDeleted))
			if _, granted := f.AuditedEvictions(t, ns, pod.Name); granted != 1 {
				t.Errorf("%d evictions of the pod granted, want 1", granted)
			}
			writers := map[string]bool{}
			for _, e := range ev.ManagedFields {
				writers[e.Manager] = true
			}
			if !writers[string(upstream)] || !writers[managers[other]] || writers[managers[upstream]] || writers[string(other)] {
				t.Errorf("the Eviction was written by %v, want kube-controller-manager's %s and ours of %s only", slices.Sorted(maps.Keys(writers)), upstream, other)
			}
		})
	}
}

// Ours take over the fields kube-controller-manager's controller left when
// it handed its objects back: an Eviction labelled by it for two
// requesters loses the label of the one whose request goes, once ours
// write it, instead of keeping it for ever (and rewriting at every
// resync), and kube-controller-manager's entry is gone from it.
func TestOursTakeOverTheFieldsKubeControllerManagerLeft(t *testing.T) {
	restoreOurControllers(t)
	ctx := t.Context()
	if err := f.RestartLifecycleControllerWith(ctx, append(lifecycleArgs, localcluster.ActorsOnly)...); err != nil {
		t.Fatal(err)
	}
	if err := f.StartUpstreamControllers(ctx); err != nil {
		t.Fatal(err)
	}
	ns := f.NewNamespace(t)
	const holder, stays, goes = "e2e.example.com/holds", "e2e.example.com/stays", "e2e.example.com/goes"
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	heldResponder(t, ns, holder, release)
	pod := podWithResponder(t, ns, "db-0", holder)
	framework.RequestEviction(t, f.NewLifecycleRequester(t, stays, requester.Options{KeepAfterPod: true}), pod)
	leaving := framework.RequestEviction(t, f.NewLifecycleRequester(t, goes, requester.Options{KeepAfterPod: true}), pod)
	f.WaitForEviction(t, pod, "both requesters labelled by kube-controller-manager's controller", func(ev *lifecyclev1alpha1.Eviction) error {
		if ev.Labels[stays] == "" || ev.Labels[goes] == "" || !writtenBy(ev, string(stepaside.EvictionRequestController)) {
			return fmt.Errorf("labels %v", ev.Labels)
		}
		return nil
	})

	f.StopUpstreamControllers()
	if err := handBackToOurs(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.Kube.LifecycleV1alpha1().EvictionRequests(ns).Delete(ctx, leaving.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForEviction(t, pod, "the label of the request gone removed by ours", func(ev *lifecyclev1alpha1.Eviction) error {
		if _, ok := ev.Labels[goes]; ok || ev.Labels[stays] == "" {
			return fmt.Errorf("labels %v", ev.Labels)
		}
		if writtenBy(ev, string(stepaside.EvictionRequestController)) {
			return fmt.Errorf("kube-controller-manager's controller still holds fields: %v", managersOf(ev))
		}
		return nil
	})
}

// writtenBy is true when manager holds fields of ev.
func writtenBy(ev *lifecyclev1alpha1.Eviction, manager string) bool {
	return slices.Contains(managersOf(ev), manager)
}

// managersOf are the field managers of ev.
func managersOf(ev *lifecyclev1alpha1.Eviction) []string {
	var managers []string
	for _, e := range ev.ManagedFields {
		managers = append(managers, e.Manager)
	}
	return managers
}
