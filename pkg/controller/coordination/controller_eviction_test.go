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
	if got := f.get().Status.Message; !strings.Contains(got, "evicted through the Eviction API") {
		t.Errorf("status.message = %q", got)
	}
	f.expectEvents("Normal " + EventEvicted)
	after, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultSuccess))
	if after != before+1 {
		t.Errorf("evictions{result=success} went from %v to %v, want +1", before, after)
	}

	// The status write wakes the controller before the pod cache shows the
	// pod terminating: it must not evict the pod again.
	f.clock.Step(time.Second)
	if requeue := f.sync(); requeue != 59*time.Second || len(f.evicted()) != 1 {
		t.Errorf("sync after the eviction: requeue %s and %d evictions, want 59s and still 1", requeue, len(f.evicted()))
	}
	// The pod terminates: nothing more to do until it is gone.
	terminating := newPod(func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(f.clock.Now())) })
	if err := f.podIndexer.Update(terminating); err != nil {
		t.Fatal(err)
	}
	if requeue := f.sync(); requeue != 0 || len(f.evicted()) != 1 {
		t.Errorf("sync of a terminating pod: requeue %s and %d evictions, want none and still 1", requeue, len(f.evicted()))
	}
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
