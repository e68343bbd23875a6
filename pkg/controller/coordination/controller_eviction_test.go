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

package coordination

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
)

func TestNoInterceptorEvictsThePod(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	before, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultSuccess))

	if requeue := f.sync(); requeue != time.Minute {
		t.Errorf("requeue after a successful eviction = %s, want the 1m expectation timeout", requeue)
	}
	if diff := cmp.Diff([]string{"web-0@" + podUID}, f.evicted()); diff != "" {
		t.Errorf("evictions with their UID precondition (-want +got):\n%s", diff)
	}
	f.expectEvents("Normal " + EventEvicted)
	after, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultSuccess))
	if after != before+1 {
		t.Errorf("evictions{result=success} went from %v to %v, want +1", before, after)
	}
	// The grant itself is not written: the pod's termination says it.
	if n := wrappers.StatusUpdates(f.erClient.Actions()); n != 0 {
		t.Errorf("%d status writes for the granted eviction, want none until the pod terminates", n)
	}

	// Another change wakes the controller before the pod cache shows the
	// pod terminating: it must not evict the pod again.
	f.clock.Step(200 * time.Millisecond)
	if requeue := f.sync(); requeue != 59800*time.Millisecond || len(f.evicted()) != 1 {
		t.Errorf("sync after the eviction: requeue %s and %d evictions, want 59.8s and still 1", requeue, len(f.evicted()))
	}
	// The pod terminates, with a grace period: a second after the grant,
	// on the controller's clock, the request says the eviction started it,
	// once, however often the terminating pod changes, and waits for it
	// to go.
	if err := f.podIndexer.Update(evictedPod(f.clock.Now(), 30)); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(100 * time.Millisecond)
	if requeue := f.sync(); requeue != 700*time.Millisecond || wrappers.StatusUpdates(f.erClient.Actions()) != 0 {
		t.Errorf("sync of a pod terminating 300ms after the grant: requeue %s and %d status writes, want 700ms and none", requeue, wrappers.StatusUpdates(f.erClient.Actions()))
	}
	f.clock.Step(700 * time.Millisecond)
	for i := 0; i < 3; i++ {
		if requeue := f.sync(); requeue != 0 || len(f.evicted()) != 1 {
			t.Errorf("sync %d of a terminating pod: requeue %s and %d evictions, want none and still 1", i, requeue, len(f.evicted()))
		}
	}
	if got := f.get().Status.Message; !strings.Contains(got, "evicted through the Eviction API; waiting for it to terminate") {
		t.Errorf("status.message of the terminating pod = %q", got)
	}
	if n := wrappers.StatusUpdates(f.erClient.Actions()); n != 1 {
		t.Errorf("%d status writes while the evicted pod terminates, want 1", n)
	}
	f.expectEvents()
}

// evictedPod is the pod as the Eviction API leaves it, deleted at
// deleted with a grace period of grace seconds: DisruptionTarget=True,
// reason EvictionByEvictionAPI.
func evictedPod(deleted time.Time, grace int64) *corev1.Pod {
	return newPod(func(p *corev1.Pod) {
		p.DeletionTimestamp = ptr.To(metav1.NewTime(deleted.Add(time.Duration(grace) * time.Second)))
		p.DeletionGracePeriodSeconds = ptr.To(grace)
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: podutil.ReasonEvictionByEvictionAPI, Message: "Eviction API: evicting"})
	})
}

// A new leader, or the controller after a restart, does not know it
// granted the eviction of a terminating pod: the pod says the Eviction API
// evicted it, so the request says so too, a second after this controller
// first saw it terminating; a pod deleted otherwise is said to terminate
// at once.
func TestATerminatingPodIsDescribedByHowItWasDeleted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		wait    time.Duration
		message string
	}{
		{"evicted through the Eviction API", evictedPod(start.Add(-10*time.Second), 60), time.Second, "Pod web-0 was evicted through the Eviction API; waiting for it to terminate."},
		{"deleted", newPod(func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(start.Add(50 * time.Second))) }), 0, "Pod web-0 is terminating; waiting for it to be gone."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.addPod(tc.pod)
			f.addEvictionRequest(newEvictionRequest())
			if requeue := f.sync(); requeue != tc.wait {
				t.Errorf("first sync of the terminating pod: requeue %s, want %s", requeue, tc.wait)
			}
			f.clock.Step(tc.wait)
			f.sync()
			if got := f.get().Status.Message; got != tc.message {
				t.Errorf("status.message = %q, want %q", got, tc.message)
			}
			if len(f.evicted()) != 0 {
				t.Errorf("a terminating pod was evicted again: %v", f.evicted())
			}
		})
	}
}

// A pod evicted and gone within a second costs one status write: the
// completion.
func TestAnEvictedPodGoneAtOnceIsCompletedInOneWrite(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.sync()
	if err := f.podIndexer.Update(newPod(func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(f.clock.Now())) })); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(500 * time.Millisecond)
	f.sync()
	if err := f.podIndexer.Delete(newPod()); err != nil {
		t.Fatal(err)
	}
	if err := f.kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ns, "web-0"); err != nil {
		t.Fatal(err)
	}
	f.sync()
	if !coordinationutil.IsComplete(f.get()) {
		t.Errorf("status = %+v, want Complete", f.get().Status)
	}
	if n := wrappers.StatusUpdates(f.erClient.Actions()); n != 1 {
		t.Errorf("%d status writes, want the completion's only", n)
	}
	f.expectEvents("Normal "+EventEvicted, "Normal "+EventCompleted)
}

// A refusal that names its PodDisruptionBudget names it on the request, as
// the lifecycle.k8s.io evictor does: both take the message from the
// eviction core.
func TestARefusalNamesTheBudget(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.failEvictions(wrappers.RefusedByBudget("web-pdb"))
	f.sync()
	if msg := f.get().Status.Message; !strings.Contains(msg, "(attempts=1): PodDisruptionBudget web-pdb refuses it") {
		t.Errorf("status.message = %q, want the refusing budget named", msg)
	}
}

func TestPodsTheAPIMustNotEvict(t *testing.T) {
	cases := map[string]struct {
		pod         *corev1.Pod
		wantMessage string
		wantEvent   bool
	}{
		"terminating": {
			pod:         newPod(func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(start)) }),
			wantMessage: "is terminating",
		},
		"DaemonSet": {
			pod: newPod(func(p *corev1.Pod) {
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "fluentd", UID: "ds", Controller: ptr.To(true)}}
			}),
			wantMessage: "is a DaemonSet pod", wantEvent: true,
		},
		"mirror": {
			pod:         newPod(func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"} }),
			wantMessage: "is a mirror pod", wantEvent: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.addPod(tc.pod)
			f.addEvictionRequest(newEvictionRequest())
			for i := 0; i < 3; i++ {
				if requeue := f.sync(); requeue != 0 {
					t.Errorf("requeue = %s, want none", requeue)
				}
			}
			if len(f.evicted()) != 0 {
				t.Errorf("evicted %v", f.evicted())
			}
			if msg := f.get().Status.Message; !strings.Contains(msg, tc.wantMessage) {
				t.Errorf("status.message = %q, want %q", msg, tc.wantMessage)
			}
			var want []string
			if tc.wantEvent {
				want = []string{"Warning " + EventEvictionNotSupported}
			}
			f.expectEvents(want...)
		})
	}
}
