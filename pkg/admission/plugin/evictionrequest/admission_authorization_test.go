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

package evictionrequest

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// rbac answers as RBAC does: a rule without resourceNames grants every
// name and a question without one; a rule with resourceNames grants only
// those names, never a question without a name. It counts the questions.
type rbac struct {
	// everyPod may delete every pod of the namespace; named, only the
	// pods listed.
	everyPod, named string
	pods            []string

	mu        sync.Mutex
	questions []string
}

func (r *rbac) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	r.mu.Lock()
	r.questions = append(r.questions, a.GetUser().GetName()+" "+a.GetVerb()+" pods/"+a.GetName())
	r.mu.Unlock()
	if a.GetVerb() != "delete" || a.GetResource() != "pods" || a.GetNamespace() != namespace {
		return authorizer.DecisionNoOpinion, "", nil
	}
	switch a.GetUser().GetName() {
	case r.everyPod:
		return authorizer.DecisionAllow, "", nil
	case r.named:
		for _, name := range r.pods {
			if a.GetName() == name {
				return authorizer.DecisionAllow, "", nil
			}
		}
	}
	return authorizer.DecisionNoOpinion, "no RBAC rule allows it", nil
}

// A writer who may delete only some pods (a role with resourceNames) may
// write the requests of those pods and is refused for the others; a writer
// who may delete every pod of the namespace is asked one question, about
// the namespace, which the delegated authorizer caches, instead of one per
// pod.
func TestTheWriterMayDeleteThePodExactlyAsBefore(t *testing.T) {
	authz := &rbac{everyPod: "drainer", named: "web-operator", pods: []string{"web-0"}}
	other := newPod(func(p *corev1.Pod) { p.Name, p.UID = "db-0", "22222222-2222-4333-8444-555555555555" })
	plugin := newPluginWith(t, authorizer.AuthorizerFunc(authz.Authorize), []runtime.Object{newPod(), other}, nil)
	forPod := func(pod *corev1.Pod) *coordination.EvictionRequest {
		return newEvictionRequest(func(er *coordination.EvictionRequest) {
			er.Name = string(pod.UID)
			er.Spec.Target.PodRef = &coordination.LocalPodReference{Name: pod.Name, UID: string(pod.UID)}
		})
	}
	for _, tc := range []struct {
		user    string
		pod     *corev1.Pod
		allowed bool
	}{
		{"web-operator", newPod(), true},
		{"web-operator", other, false},
		{"drainer", newPod(), true},
		{"drainer", other, true},
		{"intern", newPod(), false},
	} {
		a := attributes(admission.Update, "", tc.user, forPod(tc.pod), forPod(tc.pod))
		err := plugin.Validate(context.Background(), a, nil)
		if tc.allowed != (err == nil) {
			t.Errorf("%s writing the request of pod %s: %v, want allowed %v", tc.user, tc.pod.Name, err, tc.allowed)
		}
		if !tc.allowed && (err == nil || !strings.Contains(err.Error(), `cannot delete pod "`+tc.pod.Name+`"`)) {
			t.Errorf("the refusal %v does not name the pod", err)
		}
	}
	var drainer []string
	for _, q := range authz.questions {
		if strings.HasPrefix(q, "drainer ") {
			drainer = append(drainer, q)
		}
	}
	if len(drainer) != 2 || drainer[0] != "drainer delete pods/" || drainer[1] != "drainer delete pods/" {
		t.Errorf("questions about drainer %q, want one about the namespace per write", drainer)
	}
}
