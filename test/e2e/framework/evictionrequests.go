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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	evrclient "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/typed/coordination/v1alpha1"
)

// EvictionRequests is the EvictionRequest client of namespace ns.
func (f *Framework) EvictionRequests(ns string) evrclient.EvictionRequestInterface {
	return f.Clientset.CoordinationV1alpha1().EvictionRequests(ns)
}

// NewEvictionRequest returns an EvictionRequest for pod, named after its UID,
// from the given requesters.
func NewEvictionRequest(pod *corev1.Pod, requesters ...string) *v1alpha1.EvictionRequest {
	er := &v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Name: string(pod.UID), Namespace: pod.Namespace},
		Spec: v1alpha1.EvictionRequestSpec{
			Target: v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: pod.Name, UID: string(pod.UID)}},
		},
	}
	for _, name := range requesters {
		er.Spec.Requesters = append(er.Spec.Requesters, v1alpha1.Requester{Name: name})
	}
	return er
}

// CreateEvictionRequest creates an EvictionRequest for pod.
func (f *Framework) CreateEvictionRequest(t testing.TB, pod *corev1.Pod, requesters ...string) *v1alpha1.EvictionRequest {
	t.Helper()
	er, err := f.EvictionRequests(pod.Namespace).Create(t.Context(), NewEvictionRequest(pod, requesters...), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the EvictionRequest of pod %s: %v", pod.Name, err)
	}
	return er
}
