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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/cmd/evictionrequest-controller/app"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// kubeletParticipant is name on lifecycle.k8s.io, read as a participant.
func kubeletParticipant(t *testing.T, name string) participant.Participant {
	t.Helper()
	p, err := participant.New(evictionapi.Lifecycle, name, f.Kube, nil, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// heldByASilentResponder is a pod whose responder never answers.
var heldByASilentResponder = framework.PodOptions{Mutate: func(p *corev1.Pod) {
	p.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder("e2e.example.com/hold", 5000)}
}}

// A graceful node shutdown, from the real kubelet, of a node with a
// one-replica Deployment opted in to the surge responder: the Deployment
// stays up, the old pod ends as the kubelet leaves it, the node drain's
// request completes, no eviction is made twice.
func TestKubeletGracefulShutdownKeepsADeploymentUp(t *testing.T) {
	t.Parallel()
	f.CheckKubeletGracefulShutdownKeepsADeploymentUp(t, func(dep *appsv1.Deployment) {
		dep.Spec.Template.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(surge.DefaultLifecycleName, lifecycleutil.ManagingControllerPriority)}
	}, kubeletParticipant(t, app.DefaultNodeDrainRequester))
}

// A graceful shutdown called off while the kubelet stops a pod whose
// responder never answers: the node is Ready and schedulable again, the
// drain ends, nothing is evicted.
func TestKubeletShutdownCalledOff(t *testing.T) {
	t.Parallel()
	f.CheckKubeletShutdownCalledOff(t, heldByASilentResponder, kubeletParticipant(t, app.DefaultNodeDrainRequester))
}

// A pod whose responder never answers, on a node shut down gracefully: the
// kubelet kills it at its grace period, its request completes, the node is
// drained and powers off.
func TestKubeletShutdownOfAPodWhoseResponderNeverAnswers(t *testing.T) {
	t.Parallel()
	f.CheckKubeletShutdownOfAHeldPod(t, heldByASilentResponder, kubeletParticipant(t, app.DefaultNodeDrainRequester))
}

// A node lost without a graceful shutdown: its kubelet killed, the node
// tainted out-of-service, kube-controller-manager removes its pods and
// their requests complete.
func TestKubeletNonGracefulShutdown(t *testing.T) {
	t.Parallel()
	f.CheckKubeletNonGracefulShutdown(t, heldByASilentResponder, kubeletParticipant(t, "e2e.example.com/node-maintenance"))
}
