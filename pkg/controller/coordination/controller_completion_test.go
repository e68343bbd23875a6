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

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// gracefulShutdown ends a pod as the kubelet does in a graceful node
// shutdown.
func gracefulShutdown(p *corev1.Pod) {
	p.Status.Phase = corev1.PodFailed
	p.Status.Reason = "Terminated"
	p.Status.Message = "Pod was terminated in response to imminent node shutdown."
}

// completionCases are the cases of TestCompletion: the pod in the cache and on the server, the requesters and policy, and how the request must complete (no reason: not yet).
var completionCases = map[string]struct {
	cachedPod, livePod *corev1.Pod
	requesters         []v1alpha1.Requester
	policy             v1alpha1.EvictionRequestCancellationPolicy
	wantReason         string
	wantMessage        string
}{
	"pod deleted":                 {wantReason: v1alpha1.CompleteReasonPodDeleted, wantMessage: "Pod web-0 was deleted."},
	"pod replaced under its name": {cachedPod: newPod(func(p *corev1.Pod) { p.UID = "new-uid" }), livePod: newPod(func(p *corev1.Pod) { p.UID = "new-uid" }), wantReason: v1alpha1.CompleteReasonPodDeleted, wantMessage: "now has UID new-uid"},
	"pod succeeded":               {cachedPod: newPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), livePod: newPod(), wantReason: v1alpha1.CompleteReasonPodTerminated, wantMessage: "reached phase Succeeded"},
	"pod ended by a graceful node shutdown": {
		cachedPod: newPod(gracefulShutdown), livePod: newPod(gracefulShutdown),
		wantReason: v1alpha1.CompleteReasonPodTerminated, wantMessage: "Failed (Terminated: Pod was terminated in response to imminent node shutdown.)",
	},
	"every requester withdrew": {cachedPod: newPod(), livePod: newPod(), requesters: []v1alpha1.Requester{}, policy: v1alpha1.Allow, wantReason: v1alpha1.CompleteReasonCanceled},
	"no requester under Forbid waits for the interceptor": {
		cachedPod: newPod(), livePod: newPod(), requesters: []v1alpha1.Requester{}, policy: v1alpha1.Forbid,
	},
	"a pod missing from a lagging cache is looked up live": {livePod: newPod()},
}

func TestCompletion(t *testing.T) {
	cases := completionCases
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			if tc.livePod != nil {
				if err := f.kube.Tracker().Add(tc.livePod); err != nil {
					t.Fatal(err)
				}
			}
			if tc.cachedPod != nil {
				if err := f.podIndexer.Add(tc.cachedPod); err != nil {
					t.Fatal(err)
				}
			}
			er := newEvictionRequest("a.example.com", "b.example.com")
			er.Status.ActiveInterceptorName = ptr.To("b.example.com")
			er.Status.ActiveInterceptorCompleted = false
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(start))
			er.Status.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(start.Add(time.Hour)))
			if tc.requesters != nil {
				er.Spec.Requesters = tc.requesters
				er.Status.EvictionRequestCancellationPolicy = ptr.To(tc.policy)
			}
			f.addEvictionRequest(er)

			f.sync()
			got := f.get()
			condition := apimeta.FindStatusCondition(got.Status.Conditions, string(v1alpha1.EvictionRequestComplete))
			if tc.wantReason == "" {
				if condition != nil {
					t.Fatalf("completed with %+v, want the request to go on", condition)
				}
				if activeName(got) != "b.example.com" {
					t.Errorf("active interceptor = %q, want b still in charge", activeName(got))
				}
				return
			}
			if condition == nil || condition.Status != metav1.ConditionTrue || condition.Reason != tc.wantReason ||
				!strings.Contains(condition.Message, tc.wantMessage) || !condition.LastTransitionTime.Time.Equal(start) || condition.ObservedGeneration != 1 {
				t.Fatalf("Complete condition = %+v, want True with reason %s and a message with %q", condition, tc.wantReason, tc.wantMessage)
			}
			if got.Status.ActiveInterceptorName != nil || got.Status.ExpectedInterceptorFinishTime != nil || got.Status.ActiveInterceptorCompleted {
				t.Errorf("the active interceptor fields survived completion: %+v", got.Status)
			}
			if len(f.evicted()) != 0 {
				t.Errorf("evicted %v while completing", f.evicted())
			}
			wantEvent := "Normal " + EventCompleted
			if tc.wantReason == v1alpha1.CompleteReasonCanceled {
				wantEvent = "Normal " + EventCanceled
			}
			f.expectEvents(wantEvent)

			// A complete request is left alone.
			if requeue := f.sync(); requeue != 0 || len(f.events()) != 0 {
				t.Errorf("a complete request was synced again: requeue %s", requeue)
			}
		})
	}
}
