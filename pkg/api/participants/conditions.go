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

package participants

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

// SkipCondition names the matchCondition that the policy of a rule with
// skipPodsWithOwnParticipants holds: true for a pod that declares no
// participant of its own (docs/participants.md), false for one whose
// team declared its own, which the rule leaves alone.
const SkipCondition = "pod-declares-no-participants"

// conditionEnv is the CEL environment of new expressions of
// kube-apiserver (its libraries at this module's Kubernetes version), with
// the pod as object: what a matchCondition that reads only the pod sees.
var conditionEnv = sync.OnceValues(func() (*cel.Env, error) {
	set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        []cel.EnvOption{cel.Variable("object", cel.DynType)},
	})
	if err != nil {
		return nil, err
	}
	return set.Env(environment.NewExpressions)
})

// MatchConditions evaluates the matchConditions of policy against pod, by
// name. A condition that reads more than the pod (oldObject, request,
// params, namespaceObject, authorizer) fails to compile here: the rules
// of the chart read only the pod.
func MatchConditions(policy *admissionregistrationv1.MutatingAdmissionPolicy, pod *corev1.Pod) (map[string]bool, error) {
	env, err := conditionEnv()
	if err != nil {
		return nil, err
	}
	object, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		return nil, err
	}
	results := make(map[string]bool, len(policy.Spec.MatchConditions))
	for _, c := range policy.Spec.MatchConditions {
		ast, issues := env.Compile(c.Expression)
		if issues.Err() != nil {
			return nil, fmt.Errorf("matchCondition %s of %s: %w", c.Name, policy.Name, issues.Err())
		}
		program, err := env.Program(ast)
		if err != nil {
			return nil, fmt.Errorf("matchCondition %s of %s: %w", c.Name, policy.Name, err)
		}
		value, _, err := program.Eval(map[string]any{"object": object})
		if err != nil {
			return nil, fmt.Errorf("matchCondition %s of %s: %w", c.Name, policy.Name, err)
		}
		result, ok := value.Value().(bool)
		if !ok {
			return nil, fmt.Errorf("matchCondition %s of %s is %v, not a bool", c.Name, policy.Name, value)
		}
		results[c.Name] = result
	}
	return results, nil
}

// LeftAloneForOwnParticipants is true when policy, a rule's, selects pod
// by all its matchConditions but SkipCondition, and leaves it alone
// because the pod declares participants of its own. The binding's
// selectors (namespaces, pod labels) are the caller's to check.
func LeftAloneForOwnParticipants(policy *admissionregistrationv1.MutatingAdmissionPolicy, pod *corev1.Pod) (bool, error) {
	results, err := MatchConditions(policy, pod)
	if err != nil {
		return false, err
	}
	noneOwn, skips := results[SkipCondition]
	if !skips || noneOwn {
		return false, nil
	}
	for name, result := range results {
		if name != SkipCondition && !result {
			return false, nil
		}
	}
	return true, nil
}
