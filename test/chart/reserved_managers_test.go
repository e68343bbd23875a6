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

package chart

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/stepaside"
)

// The policy that reserves kube-controller-manager's field managers, as the
// chart renders it for lifecycle.k8s.io, is one evictionrequest-controller's
// guard finds in force: otherwise the guard would trust no write, and ours
// would never step aside for kube-controller-manager's.
func TestTheChartsReservationPolicyIsInForceForTheGuard(t *testing.T) {
	objects, err := helmTemplate(t, "--set=apis.lifecycle.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	var policy *admissionregistrationv1.ValidatingAdmissionPolicy
	var binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, obj := range objects {
		if obj.GetName() != stepaside.PolicyName {
			continue
		}
		switch obj.GetKind() {
		case "ValidatingAdmissionPolicy":
			policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, policy)
		case "ValidatingAdmissionPolicyBinding":
			binding = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, binding)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if policy == nil || binding == nil {
		t.Fatalf("the chart renders no ValidatingAdmissionPolicy and binding %s", stepaside.PolicyName)
	}
	if err := stepaside.InForce(policy, binding); err != nil {
		t.Errorf("the chart's policy is not in force for the guard: %v", err)
	}
}
