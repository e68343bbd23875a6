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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
)

func TestEnqueuePodFindsTheRequestByUID(t *testing.T) {
	f := newFixture(t)
	f.addEvictionRequest(newEvictionRequest())
	other := newPod(func(p *corev1.Pod) { p.Name, p.UID = "other", "no-request" })

	f.controller.enqueuePod(other)
	f.controller.enqueuePod(cache.DeletedFinalStateUnknown{Key: ns + "/web-0", Obj: newPod()})
	if f.controller.queue.Len() != 1 {
		t.Fatalf("queue has %d keys, want only the request of web-0", f.controller.queue.Len())
	}
	got, _ := f.controller.queue.Get()
	if got != key {
		t.Errorf("queued %q, want %q", got, key)
	}
}

func TestMetricsSnapshot(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod(func(p *corev1.Pod) {
		// Names the server would refuse are not reported by name: anyone
		// who may create a pod could otherwise add series at will.
		p.Annotations = map[string]string{v1alpha1.PodInterceptorsAnnotation: "a.example.com, b.example.com, Not_Valid, stolen.k8s.io"}
	}))
	er := newEvictionRequest("a.example.com", "b.example.com")
	er.Status.ActiveInterceptorName = ptr.To("b.example.com")
	f.addEvictionRequest(er)
	done := newEvictionRequest()
	done.Name = "done"
	// The complete request is older, and not the oldest in progress.
	done.CreationTimestamp = metav1.NewTime(start.Add(-time.Hour))
	done.Status.Conditions = []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue}}
	if err := f.erIndexer.Add(done); err != nil {
		t.Fatal(err)
	}

	want := metrics.Snapshot{
		ActiveInterceptors: map[string]int{"b.example.com": 1},
		ActiveRequesters:   map[string]int{"nodemaintenance.k8s.io": 1},
		PodInterceptors:    map[string]int{"a.example.com": 1, "b.example.com": 1, metrics.InvalidLabelValue: 2},
		OldestInProgress:   start,
	}
	if diff := cmp.Diff(want, f.controller.MetricsSnapshot()); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}
