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
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// The interceptor is killed mid-surge; started again it finishes the job
// from the state it left on the objects.
func TestSurgeInterceptorRestartedMidSurgeFinishes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "surge-restart.e2e.example.com"
	first := startOwnSurgeInterceptor(t, ns, name)
	// The replacement is Ready at once on kwok, and available 8 s later:
	// the surge is still waiting when the interceptor is killed.
	original := podOnCordonedNode(t, ns, name, func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 8 })
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, &original); err != nil {
		t.Fatal(err)
	}
	waitForSurge(t, ns, "db", 2)

	first.Kill()
	second := startOwnSurgeInterceptor(t, ns, name)
	waitForReplacementBySurge(t, ns, original)
	// What the monitoring component's dashboard reads of the surge
	// interceptor is on its /metrics.
	framework.CheckMonitoredMetrics(t, framework.ScrapeProcessMetrics(t, second), "evictionrequest_surge_interceptor_")
	// And only to the callers kube-apiserver authorizes.
	f.CheckMetricsAuthorization(t, second)
}

// Two surge interceptors of different names on one pod: the first is killed
// mid-surge and times out. The second, handed the request, does not join the
// first's surge (it would report on the first's replacement) but waits until
// a janitor undoes it, the first no longer holding the request; then it
// replaces the pod with a surge of its own, never with more than one
// replacement at a time or without a Ready pod.
func TestSurgeHandedOverToAnotherSurgeInterceptor(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const first, second = "surge-first.e2e.example.com", "surge-second.e2e.example.com"
	firstProcess := startOwnSurgeInterceptor(t, ns, first)
	// The highest index is selected first. The replacement is available
	// 8 s after it is Ready: the surge still waits when the first is killed.
	original := podOnCordonedNode(t, ns, second+","+first, func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 8 })
	w := f.WatchReady(t, ns, "db")
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, &original); err != nil {
		t.Fatal(err)
	}
	uid := string(original.UID)
	waitForSurgeBy(t, ns, "db", first)
	firstReplacement := waitForReplacementPod(t, ns, original)

	firstProcess.Kill()
	// The second's own janitor looks at start, while the first still holds
	// the request, and not again for a while: the first's surge outlives
	// the hand-over until the cluster's janitor (every 10 s) undoes it.
	startOwnSurgeInterceptor(t, ns, second, "--janitor-period=1m")
	messages := watchMessages(t, ns, uid, second)
	active := f.WaitUntilActive(t, ns, uid, first)
	deadline := time.Duration(*active.Spec.HeartbeatDeadlineSeconds) * time.Second
	setStatus(t, ns, uid, func(er *v1alpha1.EvictionRequest) {
		er.Status.HeartbeatTime = ptr.To(metav1.NewTime(time.Now().Add(-deadline - time.Minute).Truncate(time.Second)))
	})

	waitForSurgeBy(t, ns, "db", second)
	f.WaitForCompletion(t, ns, uid, v1alpha1.CompleteReasonPodDeleted)
	f.WaitForReplicas(t, ns, "db", 1)
	w.Stop()
	for _, message := range messages() {
		if strings.Contains(message, firstReplacement) {
			t.Errorf("the second interceptor joined the first's surge: %q", message)
		}
	}
	if minReady, maxLive := w.Extremes(); minReady < 1 || maxLive > 2 {
		t.Errorf("pods of db during the hand-over: at least %d Ready and at most %d live, want 1 and 2", minReady, maxLive)
	}
	if pods := f.PodsOf(t, ns, "db"); len(pods) != 1 || pods[0].UID == original.UID {
		t.Errorf("pods after the surge: %v", framework.PodNames(pods))
	}
	if reasons := f.EventReasons(t, ns, "", uid); slices.Contains(reasons, coordinationcontroller.EventEvicted) {
		t.Errorf("the pod was evicted through the API: %v", reasons)
	}
	f.WaitForEvents(t, ns, "", "db", surge.EventSurgeStarted, surge.EventSurgeReverted, surge.EventSurgeScaledDown)
}
