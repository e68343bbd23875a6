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
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	coordinationv1alpha1 "github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// interceptedBy opts a Deployment's pods in to the interceptor name.
func interceptedBy(name string) func(*appsv1.Deployment) {
	return func(dep *appsv1.Deployment) {
		dep.Spec.Template.Annotations = map[string]string{coordinationv1alpha1.PodInterceptorsAnnotation: name}
	}
}

// Karpenter consolidates the node of a one-replica Deployment the surge
// interceptor guards, and the Deployment keeps its ready replica: the
// bridge refuses Karpenter's evictions until the surge's replacement is
// Ready (framework.CheckKarpenterConsolidation).
func TestKarpenterConsolidatesWithoutDowntime(t *testing.T) {
	t.Parallel()
	f.CheckKarpenterConsolidation(t, evictionapi.Coordination, interceptedBy(surge.DefaultName))
}

// Karpenter's drain of a drifted node waits for an interceptor that never
// answers: for ever without a terminationGracePeriod, and until
// Karpenter's own deletion at its end with one
// (framework.CheckKarpenterWaitsForAParticipantThatNeverAnswers).
func TestKarpenterWaitsForAnInterceptorThatNeverAnswers(t *testing.T) {
	t.Parallel()
	const holder = "hold.e2e.example.com"
	for _, tc := range []struct{ name, terminationGracePeriod string }{
		{"without terminationGracePeriod", ""},
		{"with terminationGracePeriod", "20s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f.CheckKarpenterWaitsForAParticipantThatNeverAnswers(t, evictionapi.Coordination, holder, interceptedBy(holder), tc.terminationGracePeriod)
		})
	}
}

// Karpenter's disruption budget and the declarative drain's pool budget
// both hold on one NodePool (framework.CheckKarpenterAndDeclarativeDrainBudgets).
func TestKarpenterAndTheDeclarativeDrainKeepTheirBudgets(t *testing.T) {
	t.Parallel()
	f.CheckKarpenterAndDeclarativeDrainBudgets(t)
}

// A disruption Karpenter calls off, a reboot whose drain ran out, leaves
// nothing requested once the bridge's inactivity time-out passes: the
// request is canceled and the pod stays
// (framework.CheckKarpenterGivesUpAtARebootsDeadline).
func TestKarpenterGivesUpAndTheBridgeWithdraws(t *testing.T) {
	t.Parallel()
	const holder = "hold.e2e.example.com"
	f.CheckKarpenterGivesUpAtARebootsDeadline(t, evictionapi.Coordination, holder, interceptedBy(holder), bridgeInactivity, coordinationv1alpha1.CompleteReasonCanceled)
}
