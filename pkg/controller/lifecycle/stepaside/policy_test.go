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
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// The policy is in force only as shipped in what matters: it exists and
// fails closed, and its binding denies, binds it, and matches everything
// the policy does. Each case changes one of those from the shipped one.
func TestThePolicyIsInForceOnlyAsShipped(t *testing.T) {
	policy := func(mutate func(*admissionregistrationv1.ValidatingAdmissionPolicy)) *admissionregistrationv1.ValidatingAdmissionPolicy {
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: PolicyName},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: ptr.To(admissionregistrationv1.Fail)}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	binding := func(mutate func(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: PolicyName},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: PolicyName, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
		if mutate != nil {
			mutate(b)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		want    string // "" in force, else in the error
	}{
		{"as shipped", []runtime.Object{policy(nil), binding(nil)}, ""},
		{"failurePolicy defaulted", []runtime.Object{policy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.FailurePolicy = nil }), binding(nil)}, ""},
		{"no policy", []runtime.Object{binding(nil)}, "reading ValidatingAdmissionPolicy"},
		{"no binding", []runtime.Object{policy(nil)}, "reading ValidatingAdmissionPolicyBinding"},
		{"failing open", []runtime.Object{policy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
		}), binding(nil)}, "failurePolicy Ignore"},
		{"binding another policy", []runtime.Object{policy(nil), binding(func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.PolicyName = "something-else"
		})}, `binds "something-else"`},
		{"warning only", []runtime.Object{policy(nil), binding(func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}
		})}, "does not deny"},
		{"narrowed to some namespaces", []runtime.Object{policy(nil), binding(func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}
		})}, "narrows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.objects...)
			err := (&Policy{Client: client.AdmissionregistrationV1(), Name: PolicyName, CallTimeout: time.Second}).Verify(t.Context())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("not in force: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}
