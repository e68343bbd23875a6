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
	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// ownInterceptor is the interceptor a team's Deployment declares itself.
const ownInterceptor = "operator.example.com"

// interceptorParticipants are the participants of our API: the
// interceptors a pod's annotation names.
var interceptorParticipants = framework.Participants{
	Of:    func(pod *corev1.Pod) []string { return v1alpha1.PodInterceptorNames(pod.Annotations) },
	Surge: surge.DefaultName,
	DeclareOwn: func(dep *appsv1.Deployment) {
		dep.Spec.Template.Annotations = map[string]string{v1alpha1.PodInterceptorsAnnotation: ownInterceptor}
	},
	Own: ownInterceptor,
}

// A one-replica Deployment whose pod template says nothing of the surge
// interceptor, in a namespace opted in to the eviction API bridge, gets it
// from the surge interceptor's participant rule as its pod is created, and
// keeps a ready pod through kubectl drain (through the bridge) and through
// the plugin's drain; kubectl evictionrequest explain names the rule. In a
// namespace that did not opt in, the pod is created as written and the same
// drain leaves the Deployment without a ready pod for a while.
func TestParticipantRuleSurgesUndeclaredDeployments(t *testing.T) {
	t.Parallel()
	f.CheckSurgeRuleSurgesUndeclaredDeployments(t, pluginBinary, interceptorParticipants)
}

// In a namespace opted in to the eviction API bridge, the surge rule
// leaves alone a Deployment's pod that declares an interceptor of its own
// (its team chose its protection): the pod is created as written, and
// kubectl evictionrequest explain says which rule left it alone and why.
// A Deployment's pod beside it that declares nothing gets the surge
// interceptor.
func TestParticipantRuleLeavesAlonePodsThatDeclareTheirOwn(t *testing.T) {
	t.Parallel()
	f.CheckSurgeRuleLeavesAloneDeclaredPods(t, pluginBinary, interceptorParticipants)
}
