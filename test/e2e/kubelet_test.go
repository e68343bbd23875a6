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

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// The real kubelet runs a pod, and stops it when it is deleted.
func TestKubeletRunsAndStopsAPod(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	node := f.NewKubeletNode(t)
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{Node: node.Name, Mutate: framework.OnKubeletNode})
	f.MustKubectl(t, "delete", "pod", "-n", ns, pod.Name, "--timeout=60s")
}

// kubeletNodeDrain is the node drain of the suite, read as a participant.
func kubeletNodeDrain(t *testing.T, name string) participant.Participant {
	t.Helper()
	p, err := participant.New(evictionapi.Coordination, name, f.Kube, f.Clientset, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A graceful node shutdown, from the real kubelet, of a node with a
// one-replica Deployment opted in to the surge interceptor: the
// Deployment stays up, the old pod ends as the kubelet leaves it, the node
// drain's request completes, no eviction is made twice.
func TestKubeletGracefulShutdownKeepsADeploymentUp(t *testing.T) {
	t.Parallel()
	f.CheckKubeletGracefulShutdownKeepsADeploymentUp(t, func(dep *appsv1.Deployment) {
		dep.Spec.Template.Annotations = map[string]string{v1alpha1.PodInterceptorsAnnotation: surge.DefaultName}
	}, kubeletNodeDrain(t, nodedrain.DefaultRequesterName))
}

// A graceful shutdown called off while the kubelet stops a pod whose
// interceptor never answers: the node is Ready and schedulable again, the
// drain ends, nothing is evicted.
func TestKubeletShutdownCalledOff(t *testing.T) {
	t.Parallel()
	f.CheckKubeletShutdownCalledOff(t, framework.PodOptions{Interceptors: []string{parkedInterceptor}}, kubeletNodeDrain(t, nodedrain.DefaultRequesterName))
}

// A pod whose interceptor never answers, on a node shut down gracefully:
// the kubelet kills it at its grace period, its request completes, the
// node is drained and powers off. It fails with the node drain's shutdown
// detection switched off: no request is made.
func TestKubeletShutdownOfAPodWhoseInterceptorNeverAnswers(t *testing.T) {
	t.Parallel()
	f.CheckKubeletShutdownOfAHeldPod(t, framework.PodOptions{Interceptors: []string{parkedInterceptor}}, kubeletNodeDrain(t, nodedrain.DefaultRequesterName))
}

// A node lost without a graceful shutdown: its kubelet killed, the node
// tainted out-of-service, kube-controller-manager removes its pods and
// their requests complete.
func TestKubeletNonGracefulShutdown(t *testing.T) {
	t.Parallel()
	f.CheckKubeletNonGracefulShutdown(t, framework.PodOptions{Interceptors: []string{parkedInterceptor}}, kubeletNodeDrain(t, "nodemaintenance.k8s.io"))
}
