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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
)

func interceptorTimeouts(t *testing.T) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(metrics.InterceptorTimeouts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestInterceptorTimeoutsAreCountedOncePerMissedDeadline(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	er := newEvictionRequest("a.example.com", "b.example.com")
	er.Status.ActiveInterceptorName = ptr.To("b.example.com")
	f.addEvictionRequest(er)
	f.failEvictions(tooManyRequests(0))
	before := interceptorTimeouts(t)

	// b misses its deadline: a takes over.
	f.clock.Step(10 * time.Minute)
	f.sync()
	if got := interceptorTimeouts(t) - before; got != 1 {
		t.Errorf("time-outs after b missed its deadline = %v, want 1", got)
	}
	f.expectEvents("Warning " + EventInterceptorTimedOut)

	// a, the last one, misses its deadline: the Eviction API takes over and
	// is refused three times; the time-out is counted and reported once.
	f.clock.Step(10 * time.Minute)
	for i := 0; i < 3; i++ {
		f.clock.Step(f.sync())
	}
	if got := interceptorTimeouts(t) - before; got != 2 {
		t.Errorf("time-outs after a missed its deadline and three refused evictions = %v, want 2", got)
	}
	if len(f.evicted()) != 3 {
		t.Fatalf("evictions = %d, want 3", len(f.evicted()))
	}
	f.expectEvents("Warning "+EventInterceptorTimedOut, "Warning "+EventEvictionFailed, "Warning "+EventEvictionFailed, "Warning "+EventEvictionFailed)

	// a heartbeats again, then falls silent: a new time-out.
	f.setStatus(func(s *v1alpha1.EvictionRequestStatus) { s.HeartbeatTime = ptr.To(metav1.NewTime(f.clock.Now())) })
	f.sync()
	f.clock.Step(10 * time.Minute)
	f.sync()
	if got := interceptorTimeouts(t) - before; got != 3 {
		t.Errorf("time-outs after a missed a later deadline = %v, want 3", got)
	}
}

func TestCompletionObservesTheRequestDuration(t *testing.T) {
	f := newFixture(t)
	f.addEvictionRequest(newEvictionRequest())
	histogram := metrics.RequestDuration.WithLabelValues(v1alpha1.CompleteReasonPodDeleted)
	countBefore, _ := testutil.GetHistogramMetricCount(histogram)
	sumBefore, _ := testutil.GetHistogramMetricValue(histogram)

	// The pod is gone 90 s after the request was created.
	f.clock.Step(90 * time.Second)
	f.sync()
	count, _ := testutil.GetHistogramMetricCount(histogram)
	sum, _ := testutil.GetHistogramMetricValue(histogram)
	if count-countBefore != 1 || sum-sumBefore != 90 {
		t.Errorf("request_duration_seconds{reason=PodDeleted} grew by %d observations summing %vs, want 1 of 90s", count-countBefore, sum-sumBefore)
	}
	// The complete request is not observed again.
	f.sync()
	if count, _ := testutil.GetHistogramMetricCount(histogram); count-countBefore != 1 {
		t.Errorf("a complete request was observed again: %d observations", count-countBefore)
	}
}

// A new leader does not count again the time-out of a last interceptor
// whose deadline passed before it started: the previous leader did.
func TestATimeoutBeforeTheLeadershipTermIsNotCountedAgain(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	er := newEvictionRequest("a.example.com")
	er.Status.ActiveInterceptorName = ptr.To("a.example.com")
	er.Status.HeartbeatTime = ptr.To(metav1.NewTime(start.Add(-time.Hour)))
	f.addEvictionRequest(er)
	f.failEvictions(tooManyRequests(0))
	before := interceptorTimeouts(t)

	f.sync()
	if got := interceptorTimeouts(t) - before; got != 0 {
		t.Errorf("time-outs = %v for a deadline missed an hour before the term, want 0", got)
	}
	f.expectEvents("Warning " + EventEvictionFailed)
}
