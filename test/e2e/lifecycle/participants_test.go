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

package lifecycle

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// ownResponder is the responder a team's Deployment declares itself.
var ownResponder = corev1.EvictionResponder{Name: "example.com/operator", Priority: ptr.To[int32](5000)}

// responderParticipants are the participants of lifecycle.k8s.io: the
// responders of a pod's spec, by priority and name as explain prints them.
var responderParticipants = framework.Participants{
	Of:    func(pod *corev1.Pod) []string { return describeResponders(pod.Spec.EvictionResponders) },
	Surge: describeResponder(corev1.EvictionResponder{Name: surge.DefaultLifecycleName, Priority: ptr.To(lifecycleutil.ManagingControllerPriority)}),
	DeclareOwn: func(dep *appsv1.Deployment) {
		dep.Spec.Template.Spec.EvictionResponders = []corev1.EvictionResponder{ownResponder}
	},
	Own: describeResponder(ownResponder),
}

// On lifecycle.k8s.io, a one-replica Deployment whose pod template
// declares no responder, in a namespace opted in to the eviction API
// bridge, gets the surge interceptor in spec.evictionResponders from its
// participant rule as its pod is created, and keeps a ready pod through
// kubectl drain (through the bridge) and the plugin's drain. In a
// namespace that did not opt in, the pod is created as written and the
// drain leaves the Deployment without a ready pod for a while.
func TestParticipantRuleSurgesUndeclaredDeployments(t *testing.T) {
	t.Parallel()
	f.CheckSurgeRuleSurgesUndeclaredDeployments(t, pluginBinary, responderParticipants)
}

// On lifecycle.k8s.io, in a namespace opted in to the eviction API
// bridge, the surge rule leaves alone a Deployment's pod that declares a
// responder of its own (its team chose its protection): the pod is
// created as written, and kubectl evictionrequest explain says which rule
// left it alone and why. A Deployment's pod beside it that declares
// nothing gets the surge interceptor's responder.
func TestParticipantRuleLeavesAlonePodsThatDeclareTheirOwn(t *testing.T) {
	t.Parallel()
	f.CheckSurgeRuleLeavesAloneDeclaredPods(t, pluginBinary, responderParticipants)
}

// describeResponders lists responders as kubectl evictionrequest explain
// prints them.
func describeResponders(responders []corev1.EvictionResponder) []string {
	var described []string
	for _, r := range responders {
		described = append(described, describeResponder(r))
	}
	return described
}

// describeResponder is r as kubectl evictionrequest explain prints it:
// "[priority] name".
func describeResponder(r corev1.EvictionResponder) string {
	return fmt.Sprintf("[%d] %s", ptr.Deref(r.Priority, 0), r.Name)
}
