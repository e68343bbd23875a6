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

package framework

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// kubeletNodes numbers the real kubelet nodes of the suite.
var kubeletNodes atomic.Int32

// NewKubeletNode starts a node of its own for the test, run by the
// upstream kubelet with graceful node shutdown on (the local control
// plane's defaults, localcluster.DefaultKubeletNodeOptions), and stops and deletes
// it when the test ends. Only pods that tolerate its taint run there
// (OnKubeletNode).
func (f *Framework) NewKubeletNode(t testing.TB) *localcluster.KubeletNode {
	t.Helper()
	name := fmt.Sprintf("kubelet-%d", kubeletNodes.Add(1))
	n, err := f.StartKubeletNode(t.Context(), localcluster.DefaultKubeletNodeOptions(name))
	if err != nil {
		t.Fatalf("starting node %s: %v", name, err)
	}
	t.Cleanup(func() {
		n.Stop()
		// Pod GC removes the pods of a node that is gone.
		_ = f.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return n
}

// OnKubeletNode lets a pod run on the real kubelet nodes: it tolerates
// their taint. For PodOptions.Mutate.
func OnKubeletNode(pod *corev1.Pod) {
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
		Key: localcluster.KubeletNodeTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
}

// onKubeletNodeExitingAfter is a PodOptions.Mutate that runs mutate, lets
// the pod run on the real kubelet nodes and makes its containers take
// delay to exit after SIGTERM (localcluster.ExitDelayAnnotation).
func onKubeletNodeExitingAfter(mutate func(*corev1.Pod), delay string) func(*corev1.Pod) {
	return func(pod *corev1.Pod) {
		if mutate != nil {
			mutate(pod)
		}
		OnKubeletNode(pod)
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[localcluster.ExitDelayAnnotation] = delay
	}
}
