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

package lifecycle

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// respondedBy opts a Deployment's pods in to the responder name at
// priority.
func respondedBy(name string, priority int32) func(*appsv1.Deployment) {
	return func(dep *appsv1.Deployment) {
		dep.Spec.Template.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(name, priority)}
	}
}

// Karpenter consolidates the node of a one-replica Deployment whose pods
// list the surge interceptor as a responder, and the Deployment keeps its
// ready replica (framework.CheckKarpenterConsolidation). The responders'
// turns are the controller's: it runs on Kubernetes' controllers too.
func TestKarpenterConsolidatesWithoutDowntime(t *testing.T) {
	t.Parallel()
	f.CheckKarpenterConsolidation(t, evictionapi.Lifecycle, respondedBy(surge.DefaultLifecycleName, lifecycleutil.ManagingControllerPriority))
}

// Karpenter's drain of a drifted node waits for a responder that never
// answers: for ever without a terminationGracePeriod, and until
// Karpenter's own deletion at its end with one
// (framework.CheckKarpenterWaitsForAParticipantThatNeverAnswers). Nothing
// must be evicted behind the responder, which is the controller's part:
// it runs on Kubernetes' controllers too.
func TestKarpenterWaitsForAResponderThatNeverAnswers(t *testing.T) {
	t.Parallel()
	const holder = "e2e.example.com/hold"
	for _, tc := range []struct{ name, terminationGracePeriod string }{
		{"without terminationGracePeriod", ""},
		{"with terminationGracePeriod", "20s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f.CheckKarpenterWaitsForAParticipantThatNeverAnswers(t, evictionapi.Lifecycle, holder, respondedBy(holder, 5000), tc.terminationGracePeriod)
		})
	}
}

// Karpenter's disruption budget and the declarative drain's pool budget
// both hold on one NodePool (framework.CheckKarpenterAndDeclarativeDrainBudgets):
// budgets of Karpenter's and of our node drain, whichever controllers run
// the Evictions.
func TestKarpenterAndTheDeclarativeDrainKeepTheirBudgets(t *testing.T) {
	t.Parallel()
	f.CheckKarpenterAndDeclarativeDrainBudgets(t)
}

// A disruption Karpenter calls off, a reboot whose drain ran out, leaves
// nothing requested once the bridge's inactivity time-out passes: the
// bridge withdraws, the controller cancels the Eviction, and the pod stays
// (framework.CheckKarpenterGivesUpAtARebootsDeadline). The cancellation is
// the controller's: it runs on Kubernetes' controllers too.
func TestKarpenterGivesUpAndTheBridgeWithdraws(t *testing.T) {
	t.Parallel()
	const holder = "e2e.example.com/hold"
	f.CheckKarpenterGivesUpAtARebootsDeadline(t, evictionapi.Lifecycle, holder, respondedBy(holder, 5000), bridgeInactivity,
		string(lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters))
}
