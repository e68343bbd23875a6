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

package stepaside

import (
	"context"
	"fmt"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
)

// PolicyName is the name of the ValidatingAdmissionPolicy, and of its
// binding, that reserves the counterparts' field managers for
// kube-controller-manager's identities: a write of lifecycle.k8s.io under
// either name by anyone else is refused, so that the name, which any
// writer may otherwise choose (?fieldManager=), proves who wrote.
const PolicyName = "evictionrequest-reserved-field-managers"

// Verifier says whether the counterparts' field managers can be trusted
// now: nil when they can, else why not.
type Verifier interface {
	Verify(ctx context.Context) error
}

// Policy verifies that the reservation policy is in force: the policy
// exists and fails closed, and its binding denies, unnarrowed.
type Policy struct {
	// Client reads the policy and its binding.
	Client admissionv1client.AdmissionregistrationV1Interface
	// Name is the policy's and the binding's (PolicyName by default).
	Name string
	// CallTimeout bounds each call to kube-apiserver.
	CallTimeout time.Duration
}

// Verify returns nil when the policy is in force, else an error that says
// what is missing.
func (p *Policy) Verify(ctx context.Context) error {
	callCtx, cancel := context.WithTimeout(ctx, p.CallTimeout)
	defer cancel()
	policy, err := p.Client.ValidatingAdmissionPolicies().Get(callCtx, p.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading ValidatingAdmissionPolicy %s: %w", p.Name, err)
	}
	binding, err := p.Client.ValidatingAdmissionPolicyBindings().Get(callCtx, p.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading ValidatingAdmissionPolicyBinding %s: %w", p.Name, err)
	}
	return InForce(policy, binding)
}

// InForce is nil when binding enforces policy on every object it matches:
// an evaluation error refuses the write (failurePolicy Fail, the default),
// the binding denies (not only warns or audits), and selects no subset of
// namespaces or objects.
func InForce(policy *admissionregistrationv1.ValidatingAdmissionPolicy, binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding) error {
	switch {
	case policy.Spec.FailurePolicy != nil && *policy.Spec.FailurePolicy != admissionregistrationv1.Fail:
		return fmt.Errorf("ValidatingAdmissionPolicy %s has failurePolicy %s: a write it cannot evaluate would pass", policy.Name, *policy.Spec.FailurePolicy)
	case binding.Spec.PolicyName != policy.Name:
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %s binds %q, not %s", binding.Name, binding.Spec.PolicyName, policy.Name)
	case !slices.Contains(binding.Spec.ValidationActions, admissionregistrationv1.Deny):
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %s does not deny (validationActions %v)", binding.Name, binding.Spec.ValidationActions)
	case binding.Spec.MatchResources != nil:
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %s narrows what it matches (matchResources): writes outside it would pass", binding.Name)
	}
	return nil
}
