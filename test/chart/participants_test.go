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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/pkg/api/participants"
)

// rule is the --set arguments of participant rule i.
func rule(i int, fields ...string) []string {
	args := make([]string, 0, len(fields))
	for _, f := range fields {
		args = append(args, fmt.Sprintf("--set=participants.rules[%d].%s", i, f))
	}
	return args
}

// A rule that would make a pod invalid, or that adds nothing, fails helm
// install (and template) with a message naming the rule, the field and
// the API's rule, before any pod meets it.
func TestTheChartRefusesARuleThatWouldMakePodsInvalid(t *testing.T) {
	lifecycle := "--set=apis.lifecycle.enabled=true"
	var eleven []string
	for i := range 10 {
		eleven = append(eleven, rule(i, fmt.Sprintf("name=r%d", i), fmt.Sprintf("responder.name=example.com/r%d", i), "responder.priority=5000")...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a name that is no DNS label", rule(0, "name=Backup", "interceptor=backup.example.com"),
			[]string{"participants.rules[0].name", `"Backup"`, "DNS label"}},
		{"no participant", rule(0, "name=backup"), []string{"participants.rules[0] (rule backup)", "interceptor", "responder"}},
		{"an interceptor that is no DNS subdomain", rule(0, "name=backup", "interceptor=Backup_Example"),
			[]string{"participants.rules[0].interceptor", "DNS subdomain"}},
		{"a reserved interceptor", rule(0, "name=backup", "interceptor=backup.k8s.io"),
			[]string{"participants.rules[0].interceptor", "reserved for Kubernetes components", "deployment.apps.k8s.io"}},
		{"a responder without a domain", append(rule(0, "name=backup", "responder.name=backup", "responder.priority=5000"), lifecycle),
			[]string{"participants.rules[0].responder.name", "domain-prefixed key"}},
		{"a reserved responder", append(rule(0, "name=backup", "responder.name=backup.kubernetes.io/x", "responder.priority=5000"), lifecycle),
			[]string{"participants.rules[0].responder.name", "*.k8s.io and *.kubernetes.io are reserved"}},
		{"a reserved priority", append(rule(0, "name=backup", "responder.name=example.com/backup", "responder.priority=999"), lifecycle),
			[]string{"participants.rules[0].responder.priority 999", "0-999 are reserved"}},
		{"a priority above the maximum", append(rule(0, "name=backup", "responder.name=example.com/backup", "responder.priority=100001"), lifecycle),
			[]string{"participants.rules[0].responder.priority 100001", "1000 to 100000"}},
		{"no priority", append(rule(0, "name=backup", "responder.name=example.com/backup"), lifecycle),
			[]string{"participants.rules[0].responder.priority"}},
		{"eleven responders with the surge interceptor's", append(eleven, lifecycle),
			[]string{"11 different lifecycle.k8s.io responders", "at most 10 spec.evictionResponders"}},
		{"a responder on a release of coordination.k8s.io only", rule(0, "name=backup", "responder.name=example.com/backup", "responder.priority=5000"),
			[]string{"adds nothing this release serves", "apis.lifecycle.enabled"}},
		{"the surge rule's name", rule(0, "name=surge", "interceptor=backup.example.com"),
			[]string{`the rule name "surge" is taken by participants.surge`}},
		{"an owner kind the rules do not know", rule(0, "name=backup", "interceptor=backup.example.com", "ownerKinds={CronJob}"),
			[]string{"ownerKinds", "Deployment"}},
		{"a cluster without MutatingAdmissionPolicy v1", []string{"--kube-version=1.35.0"},
			[]string{"Kubernetes serves from 1.36 on", "participants.enabled=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmTemplate(t, tc.args...)
			if err == nil {
				t.Fatal("helm template accepted it")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q:\n%v", want, err)
				}
			}
		})
	}
	// Ten are within the limit, the surge interceptor's among them.
	if _, err := helmTemplate(t, append(eleven[:len(eleven)-3], lifecycle)...); err != nil {
		t.Errorf("ten responders refused: %v", err)
	}
}

// The surge interceptor's rule is in every overlay that installs the
// surge interceptor, and a value turns every rule off.
func TestTheSurgeRuleIsInEveryOverlayWithTheSurgeInterceptor(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policy := participants.PolicyName("surge")
	for _, file := range files {
		scenario := strings.TrimSuffix(filepath.Base(file), "-values.yaml")
		t.Run(scenario, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "artifacts", "overlays", scenario, "install.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			objects, err := artifacts.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			surgeInterceptor := false
			for _, obj := range objects {
				if obj.GetName() == policy {
					kinds = append(kinds, obj.GetKind())
				}
				surgeInterceptor = surgeInterceptor || obj.GetKind() == "Deployment" && obj.GetName() == "evictionrequest-surge-interceptor"
			}
			slices.Sort(kinds)
			if want := []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"}; surgeInterceptor && !slices.Equal(kinds, want) {
				t.Errorf("the overlay installs the surge interceptor and %v named %s, want %v", kinds, policy, want)
			}
		})
	}
	for _, off := range []string{"--set=participants.enabled=false", "--set=participants.surge.enabled=false", "--set=surgeInterceptor.enabled=false"} {
		objects, err := helmTemplate(t, off)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objects {
			if strings.HasPrefix(obj.GetKind(), "MutatingAdmissionPolicy") {
				t.Errorf("with %s the chart renders %s %s", off, obj.GetKind(), obj.GetName())
			}
		}
	}
}

// surgePolicy renders the chart with args and returns the surge rule's
// MutatingAdmissionPolicy.
func surgePolicy(t *testing.T, args ...string) *admissionregistrationv1.MutatingAdmissionPolicy {
	t.Helper()
	return renderedPolicy(t, "surge", args...)
}

// renderedPolicy renders the chart with args and returns the
// MutatingAdmissionPolicy of the rule named rule.
func renderedPolicy(t *testing.T, rule string, args ...string) *admissionregistrationv1.MutatingAdmissionPolicy {
	t.Helper()
	objects, err := helmTemplate(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		if obj.GetKind() == "MutatingAdmissionPolicy" && obj.GetName() == participants.PolicyName(rule) {
			policy := &admissionregistrationv1.MutatingAdmissionPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, policy); err != nil {
				t.Fatal(err)
			}
			return policy
		}
	}
	t.Fatalf("no MutatingAdmissionPolicy %s rendered with %v", participants.PolicyName(rule), args)
	return nil
}

// deploymentPod is a pod of a Deployment, as the ReplicaSet controller
// creates it, with annotations and responders.
func deploymentPod(annotations map[string]string, responders ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "web-7d9f-x2k4q", Labels: map[string]string{"pod-template-hash": "7d9f"}, Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f", UID: "1", Controller: ptr.To(true)}},
	}}
	for _, name := range responders {
		pod.Spec.EvictionResponders = append(pod.Spec.EvictionResponders, corev1.EvictionResponder{Name: name, Priority: ptr.To[int32](5000)})
	}
	return pod
}

// The surge rule leaves alone, by default, the pods that declare
// participants of their own on the APIs the release serves (their teams
// chose their protection), and still selects those that declare nothing
// or only what another rule added: the rendered matchCondition, evaluated
// by kube-apiserver's CEL libraries, says so.
func TestTheSurgeRuleLeavesAlonePodsThatDeclareParticipants(t *testing.T) {
	const annotation = "evictionrequest.coordination.k8s.io/interceptors"
	backupMark := participants.MarkPrefix + "backup"
	coordination := surgePolicy(t)
	lifecycle := surgePolicy(t, "--set=apis.coordination.enabled=false", "--set=apis.lifecycle.enabled=true")
	both := surgePolicy(t, "--set=apis.lifecycle.enabled=true")
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		// want is whether the rule selects the pod on a release that serves
		// coordination.k8s.io, lifecycle.k8s.io, both.
		want [3]bool
	}{
		{"declares nothing", deploymentPod(nil), [3]bool{true, true, true}},
		{"an annotation without a name", deploymentPod(map[string]string{annotation: " , "}), [3]bool{true, true, true}},
		{"declares an interceptor", deploymentPod(map[string]string{annotation: "backup.example.com"}), [3]bool{false, true, false}},
		{"declares a responder", deploymentPod(nil, "example.com/backup"), [3]bool{true, false, false}},
		{"declares both", deploymentPod(map[string]string{annotation: "backup.example.com"}, "example.com/backup"), [3]bool{false, false, false}},
		{"holds only what another rule added", deploymentPod(map[string]string{annotation: "backup.example.com", backupMark: "backup.example.com, example.com/backup"}, "example.com/backup"),
			[3]bool{true, true, true}},
		{"declares an interceptor beside another rule's", deploymentPod(map[string]string{annotation: "own.example.com,backup.example.com", backupMark: "backup.example.com"}),
			[3]bool{false, true, false}},
		{"declares a responder beside another rule's", deploymentPod(map[string]string{backupMark: "example.com/backup"}, "example.com/backup", "example.com/own"),
			[3]bool{true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, policy := range []*admissionregistrationv1.MutatingAdmissionPolicy{coordination, lifecycle, both} {
				results, err := participants.MatchConditions(policy, tc.pod)
				if err != nil {
					t.Fatal(err)
				}
				noneOwn, rendered := results[participants.SkipCondition]
				if selects := results["owner-kinds"] && noneOwn; !rendered || selects != tc.want[i] {
					t.Errorf("on %s the rule selects the pod: %v (the condition %s rendered: %v), want %v",
						[]string{"coordination.k8s.io", "lifecycle.k8s.io", "both APIs"}[i], selects, participants.SkipCondition, rendered, tc.want[i])
				}
			}
		})
	}
}

// skipPodsWithOwnParticipants renders the condition that leaves alone the
// pods declaring participants when true, and none when false: off on the
// surge rule, the surge interceptor is added to every Deployment's pod
// the rule selects; the admin's rules add their participant to every pod
// they select unless they turn it on.
func TestSkipPodsWithOwnParticipantsRendersTheCondition(t *testing.T) {
	own := deploymentPod(map[string]string{"evictionrequest.coordination.k8s.io/interceptors": "own.example.com"}, "example.com/own")
	admin := rule(0, "name=backup", "interceptor=backup.example.com", "responder.name=example.com/backup", "responder.priority=5000")
	both := "--set=apis.lifecycle.enabled=true"
	for _, tc := range []struct {
		name, rule string
		args       []string
		want       bool
	}{
		{"the surge rule by default", "surge", []string{both}, true},
		{"the surge rule turned off", "surge", []string{both, "--set=participants.surge.skipPodsWithOwnParticipants=false"}, false},
		{"an admin's rule by default", "backup", append(admin, both), false},
		{"an admin's rule turned on", "backup", append(admin, both, "--set=participants.rules[0].skipPodsWithOwnParticipants=true"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := renderedPolicy(t, tc.rule, tc.args...)
			results, err := participants.MatchConditions(policy, own)
			if err != nil {
				t.Fatal(err)
			}
			selected, rendered := results[participants.SkipCondition]
			if rendered != tc.want || rendered && selected {
				t.Errorf("the condition %s rendered: %v (selects a pod declaring its own participants: %v), want rendered %v and the pod left alone",
					participants.SkipCondition, rendered, selected, tc.want)
			}
			left, err := participants.LeftAloneForOwnParticipants(policy, own)
			if err != nil {
				t.Fatal(err)
			}
			if left != tc.want {
				t.Errorf("LeftAloneForOwnParticipants: %v, want %v", left, tc.want)
			}
		})
	}
}
