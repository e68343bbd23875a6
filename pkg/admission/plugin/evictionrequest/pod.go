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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
)

const podInterceptorsAnnotation = v1alpha1.PodInterceptorsAnnotation

// getPod returns the pod name in namespace, nil when it does not exist. The
// informer cache answers first; when it has no pod with the UID, one live
// GET decides, so that a pod created a moment ago is not missed because the
// cache lags.
func (p *Plugin) getPod(ctx context.Context, namespace, name, uid string) (*corev1.Pod, error) {
	if pod, err := p.pods.Pods(namespace).Get(name); err == nil && string(pod.UID) == uid {
		return pod, nil
	}
	return p.livePod(ctx, namespace, name)
}

// livePod reads the pod from kube-apiserver, nil when it does not exist.
func (p *Plugin) livePod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	pod, err := p.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("looking up pod %s/%s: %v", namespace, name, err))
	}
	return pod, nil
}

// interceptorsOf resolves the interceptors of a pod from its annotation, a
// comma-separated list with index 0 first, and validates them as the
// spec.interceptors they become.
func interceptorsOf(pod *corev1.Pod) ([]coordination.Interceptor, field.ErrorList) {
	names := v1alpha1.PodInterceptorNames(pod.Annotations)
	if names == nil {
		return nil, nil
	}
	interceptors := make([]coordination.Interceptor, 0, len(names))
	for _, name := range names {
		interceptors = append(interceptors, coordination.Interceptor{Name: name})
	}
	errs := validation.ValidateInterceptors(interceptors, field.NewPath("spec", "interceptors"))
	for _, err := range errs {
		err.Detail = fmt.Sprintf("from the %s annotation of pod %s: %s", podInterceptorsAnnotation, pod.Name, err.Detail)
	}
	return interceptors, errs
}

// mergeLabels returns the request's labels with the pod's added; the pod's
// value wins where both have a key, so that selectors on pod labels find the
// requests of those pods.
func mergeLabels(requestLabels, podLabels map[string]string) map[string]string {
	if len(podLabels) == 0 {
		return requestLabels
	}
	merged := make(map[string]string, len(requestLabels)+len(podLabels))
	for k, v := range requestLabels {
		merged[k] = v
	}
	for k, v := range podLabels {
		merged[k] = v
	}
	return merged
}
