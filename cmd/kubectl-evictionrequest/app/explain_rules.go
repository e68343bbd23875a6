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

package app

import (
	"context"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/evictionrequest/apiserver/pkg/api/participants"
)

// leftAloneBy names the participant rules that select pod but leave it
// alone because it declares participants of its own
// (skipPodsWithOwnParticipants): the rules that added it nothing whose
// policy's other matchConditions hold for the pod and whose binding
// selects it and its namespace, as they are now. A rule whose policy,
// binding or namespace the caller may not read is left out: explain
// says only what it can tell.
func (e *ExplainOptions) leftAloneBy(ctx context.Context, pod *corev1.Pod) []string {
	callCtx, cancel := e.call(ctx)
	policies, err := e.kube.AdmissionregistrationV1().MutatingAdmissionPolicies().List(callCtx, metav1.ListOptions{})
	cancel()
	if err != nil {
		return nil
	}
	var namespace *corev1.Namespace
	var rules []string
	for i := range policies.Items {
		policy := &policies.Items[i]
		rule, ok := strings.CutPrefix(policy.Name, participants.PolicyPrefix)
		if !ok {
			continue
		}
		if _, added := pod.Annotations[participants.MarkPrefix+rule]; added {
			continue
		}
		if left, err := participants.LeftAloneForOwnParticipants(policy, pod); err != nil || !left {
			continue
		}
		if namespace == nil {
			callCtx, cancel := e.call(ctx)
			namespace, err = e.kube.CoreV1().Namespaces().Get(callCtx, pod.Namespace, metav1.GetOptions{})
			cancel()
			if err != nil {
				return rules
			}
		}
		if e.bindingSelects(ctx, policy, pod, namespace) {
			rules = append(rules, rule)
		}
	}
	sort.Strings(rules)
	return rules
}

// bindingSelects is true when the binding of policy (the chart names it
// as its policy) and the policy's own constraints select pod in
// namespace.
func (e *ExplainOptions) bindingSelects(ctx context.Context, policy *admissionregistrationv1.MutatingAdmissionPolicy, pod *corev1.Pod, namespace *corev1.Namespace) bool {
	callCtx, cancel := e.call(ctx)
	binding, err := e.kube.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Get(callCtx, policy.Name, metav1.GetOptions{})
	cancel()
	if err != nil || binding.Spec.PolicyName != policy.Name {
		return false
	}
	var selectors []*admissionregistrationv1.MatchResources
	if policy.Spec.MatchConstraints != nil {
		selectors = append(selectors, policy.Spec.MatchConstraints)
	}
	if binding.Spec.MatchResources != nil {
		selectors = append(selectors, binding.Spec.MatchResources)
	}
	for _, m := range selectors {
		if !labelsMatch(m.NamespaceSelector, namespace.Labels) || !labelsMatch(m.ObjectSelector, pod.Labels) {
			return false
		}
	}
	return true
}

// labelsMatch is true when selector, nil or empty for every object,
// selects set.
func labelsMatch(selector *metav1.LabelSelector, set map[string]string) bool {
	if selector == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	return err == nil && s.Matches(labels.Set(set))
}
