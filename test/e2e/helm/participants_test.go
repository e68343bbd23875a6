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

package helm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/api/participants"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// A participant rule that would give pods more responders than
// kube-apiserver lets a pod declare fails helm install with a message
// naming the limit, and installs nothing: no team's pod meets it.
func TestHelmRefusesParticipantRulesOverTheResponderLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), helmTimeout)
	defer cancel()
	// Ten rules and the surge interceptor's: eleven responders.
	args := []string{"install", "overlimit", chart, "--namespace=overlimit", "--create-namespace", "--values=" + ciValues("lifecycle")}
	for i := range 10 {
		args = append(args, fmt.Sprintf("--set=participants.rules[%d].name=r%d", i, i),
			fmt.Sprintf("--set=participants.rules[%d].responder.name=example.com/r%d", i, i),
			fmt.Sprintf("--set=participants.rules[%d].responder.priority=5000", i))
	}
	out, err := f.Helm(ctx, args...)
	if err == nil {
		t.Fatalf("helm install accepted rules of eleven responders:\n%s", out)
	}
	if !strings.Contains(out, "11 different lifecycle.k8s.io responders") || !strings.Contains(out, "at most 10 spec.evictionResponders") {
		t.Errorf("helm install's error does not name the limit:\n%s", out)
	}
	list, err := f.Helm(ctx, "list", "--all-namespaces", "--short")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(list, "overlimit") {
		t.Errorf("a refused install left a release:\n%s", list)
	}
}

// checkSurgeRule checks that the surge interceptor's participant rule,
// its MutatingAdmissionPolicy and binding, is installed, or not.
func checkSurgeRule(t *testing.T, want bool) {
	t.Helper()
	ctx := t.Context()
	name := participants.PolicyName("surge")
	client := f.Kube.AdmissionregistrationV1()
	_, policyErr := client.MutatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
	_, bindingErr := client.MutatingAdmissionPolicyBindings().Get(ctx, name, metav1.GetOptions{})
	for _, err := range []error{policyErr, bindingErr} {
		switch {
		case want && err != nil:
			t.Errorf("the surge interceptor's rule %s: %v, want it installed", name, err)
		case !want && !apierrors.IsNotFound(err):
			t.Errorf("the surge interceptor's rule %s: %v, want it gone", name, err)
		}
	}
}

// participantsOff upgrades the release with participants.enabled=false:
// the rules are gone, and a one-replica Deployment's pod in a namespace the
// surge rule selects is created as its template says.
func participantsOff(t *testing.T) {
	t.Helper()
	if err := f.UpgradeRelease(t.Context(), "--values="+ciValues("ha-bridge"), "--set=participants.enabled=false"); err != nil {
		t.Fatal(err)
	}
	checkSurgeRule(t, false)
	ns := f.NewNamespace(t)
	f.MustKubectl(t, "label", "namespace", ns, bridge.NamespaceLabel+"="+bridge.NamespaceOptIn)
	f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "db", 1, "", nil)
	pod := f.PodsOf(t, ns, "db")[0]
	for key, value := range pod.Annotations {
		if key == v1alpha1.PodInterceptorsAnnotation || strings.HasPrefix(key, participants.MarkPrefix) {
			t.Errorf("with participants.enabled=false the pod has %s=%s", key, value)
		}
	}
}
