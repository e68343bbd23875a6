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
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// BenchmarkSyncWaitingForInterceptor measures the sync the controller runs
// most: a status update of an interceptor within its deadline, which ends in
// a requeue at the deadline and writes nothing.
func BenchmarkSyncWaitingForInterceptor(b *testing.B) {
	f := newFixture(b)
	f.addPod(newPod())
	er := newEvictionRequest("a.example.com", "b.example.com")
	er.Status.ActiveInterceptorName = ptr.To("b.example.com")
	er.Status.HeartbeatTime = ptr.To(metav1.NewTime(start))
	f.addEvictionRequest(er)
	b.ReportAllocs()
	for b.Loop() {
		requeue, err := f.controller.sync(f.ctx, key)
		if err != nil || requeue != 10*time.Minute {
			b.Fatalf("sync: requeue %s, err %v", requeue, err)
		}
	}
}

// BenchmarkMetricsSnapshot computes the gauges of /metrics over 1000 pods
// and 1000 in-progress requests.
func BenchmarkMetricsSnapshot(b *testing.B) {
	f := newFixture(b)
	for i := 0; i < 1000; i++ {
		pod := newPod()
		pod.Name, pod.UID = fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
		pod.Annotations = map[string]string{"evictionrequest.coordination.k8s.io/interceptors": "a.example.com,b.example.com"}
		if err := f.podIndexer.Add(pod); err != nil {
			b.Fatal(err)
		}
		er := newEvictionRequest("a.example.com", "b.example.com")
		er.Name = string(pod.UID)
		er.Status.ActiveInterceptorName = ptr.To("b.example.com")
		if err := f.erIndexer.Add(er); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if s := f.controller.MetricsSnapshot(); s.ActiveInterceptors["b.example.com"] != 1000 {
			b.Fatalf("snapshot %v", s.ActiveInterceptors)
		}
	}
}
