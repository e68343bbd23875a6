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
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/api/participants"
)

const surgeInterceptor = "deployment.apps.k8s.io"

func participantPolicy(rule string) *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: participants.PolicyName(rule)}}
}

func explainOut(t *testing.T, o *Options, pod string) string {
	t.Helper()
	e := &ExplainOptions{Options: o, Pod: pod, Clock: testingclock.NewFakePassiveClock(now)}
	if err := e.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	return o.Out.(interface{ String() string }).String()
}

// wantLines checks that out holds each of want, whatever the columns'
// widths.
func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	words := strings.Join(strings.Fields(out), " ")
	for _, w := range want {
		if !strings.Contains(words, w) {
			t.Errorf("explain lacks %q:\n%s", w, out)
		}
	}
}

// explain tells the interceptors a rule added from those the pod declares
// itself, in the order they take their turns, and whose turn an eviction
// requested now starts with.
func TestExplainNamesTheRuleThatAddedAnInterceptor(t *testing.T) {
	pod := testPod("web-0", "node-a").Interceptors(surgeInterceptor, "operator.example.com").
		Annotation(participants.MarkPrefix+"surge", surgeInterceptor).Obj()
	o, _, _, _ := testOptions(t, []runtime.Object{pod, participantPolicy("surge")}, nil)
	out := explainOut(t, o, "web-0")
	wantLines(t, out,
		"shop/web-0 (node node-a)",
		"Interceptors:", "highest index first",
		"[1] operator.example.com the pod's evictionrequest.coordination.k8s.io/interceptors annotation",
		"[0] "+surgeInterceptor+" added by the rule surge (MutatingAdmissionPolicy evictionrequest-participants-surge)",
		"none in progress; one requested now starts with the turn of operator.example.com",
		"<none> select the pod",
	)
	if strings.Contains(out, "that policy is gone") {
		t.Errorf("explain says the policy of a rule that exists is gone:\n%s", out)
	}
	if i, j := strings.Index(out, "[1] "), strings.Index(out, "[0] "); i > j {
		t.Errorf("the interceptors are not in the order they run:\n%s", out)
	}
}

// A participant a rule added whose policy has been deleted since is still
// the pod's: explain says the policy is gone.
func TestExplainSaysWhenTheRulesPolicyIsGone(t *testing.T) {
	pod := testPod("web-0", "node-a").Responders(wrappers.Responder("evictionrequest.github.io/surge", 10000)).
		Annotation(participants.MarkPrefix+"surge", "evictionrequest.github.io/surge").Obj()
	o, _, _ := testLifecycleOptions(t, pod)
	wantLines(t, explainOut(t, o, "web-0"),
		"Responders:", "highest priority first",
		"[10000] evictionrequest.github.io/surge added by the rule surge (MutatingAdmissionPolicy evictionrequest-participants-surge); that policy is gone",
		"[100] "+lifecycleutil.Evictor+" Kubernetes' default",
		"one requested now starts with the turn of evictionrequest.github.io/surge",
	)
}

// explain shows the eviction in progress: whose turn it is, and the budget
// that would refuse the Eviction API.
func TestExplainShowsTheTurnInProgressAndTheBlockingBudget(t *testing.T) {
	pod := testPod("web-0", "node-a").Label("app", "web").Responders(wrappers.Responder(appResponder, 5000)).Obj()
	ev := wrappers.MakeEviction("pod-1-web-0", pod).Created(now.Add(-time.Minute)).
		TargetResponder(appResponder, 5000, lifecyclev1alpha1.ResponderStateActive).
		TargetResponder(lifecycleutil.Evictor, lifecycleutil.EvictorPriority, lifecyclev1alpha1.ResponderStateInactive).
		Started(appResponder, now.Add(-time.Minute)).Heartbeat(appResponder, now.Add(-12*time.Second)).Obj()
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	er := wrappers.MakeLifecycleRequest("web-0-kubectl", pod, DefaultLifecycleRequesterName).Created(now.Add(-time.Minute)).Obj()
	o, _, _ := testLifecycleOptions(t, pod, er, ev, pdb)
	wantLines(t, explainOut(t, o, "web-0"),
		"[5000] "+appResponder+" the pod's spec.evictionResponders active",
		"Eviction: Eviction shop/pod-1-web-0", "the turn of "+appResponder+" (heartbeat 12s ago)",
		"web (0 disruptions allowed); the Eviction API refuses (429) while web allow none",
	)
}

func TestExplainOfAPodWithoutParticipants(t *testing.T) {
	o, _, _, _ := testOptions(t, []runtime.Object{testPod("web-0", "node-a").Obj()}, nil)
	wantLines(t, explainOut(t, o, "web-0"), "Interceptors: <none>: an eviction goes to the Eviction API at once")
	e := &ExplainOptions{Options: o, Pod: "gone"}
	if err := e.Run(t.Context()); err == nil || !strings.Contains(err.Error(), `pod "gone" not found in namespace shop`) {
		t.Errorf("Run() of a missing pod = %v, want it named as not found", err)
	}
}

// skippingPolicy is the policy of a rule with skipPodsWithOwnParticipants
// on coordination.k8s.io, with a second condition that holds when other
// does, and its binding, which selects the namespaces labelled team=web.
func skippingPolicy(rule string, other bool) (*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	policy := participantPolicy(rule)
	policy.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{
		{Name: "owner-kinds", Expression: strconv.FormatBool(other)},
		{Name: participants.SkipCondition, Expression: "!(has(object.metadata.annotations) && 'evictionrequest.coordination.k8s.io/interceptors' in object.metadata.annotations)"},
	}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, MatchResources: &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web"}},
		}},
	}
	return policy, binding
}

// explain names a rule that selects the pod but left it alone because it
// declares participants of its own, and only such a rule: not one whose
// other conditions or binding do not select the pod, nor one for a pod
// that declares nothing.
func TestExplainNamesTheRuleThatLeftAPodWithItsOwnParticipantsAlone(t *testing.T) {
	const line = "Left alone by the rule surge (MutatingAdmissionPolicy evictionrequest-participants-surge): the pod declares participants of its own (skipPodsWithOwnParticipants)"
	own := testPod("web-0", "node-a").Interceptors("operator.example.com").Obj()
	none := testPod("web-0", "node-a").Obj()
	selected := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "web"}}}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		namespace *corev1.Namespace
		holds     bool
		want      bool
	}{
		{"a pod with its own interceptor", own, selected, true, true},
		{"a namespace the binding does not select", own, other, true, false},
		{"another condition that does not hold", own, selected, false, false},
		{"a pod that declares nothing", none, selected, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy, binding := skippingPolicy("surge", tc.holds)
			o, _, _, _ := testOptions(t, []runtime.Object{tc.pod, tc.namespace, policy, binding}, nil)
			if out := explainOut(t, o, "web-0"); strings.Contains(out, line) != tc.want {
				t.Errorf("explain says %q: %v, want %v:\n%s", line, !tc.want, tc.want, out)
			}
		})
	}
}
