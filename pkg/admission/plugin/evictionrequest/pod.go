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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
	"github.com/evictionrequest/apiserver/pkg/util/podlookup"
)

const podInterceptorsAnnotation = v1alpha1.PodInterceptorsAnnotation

// PodAnnotationsRead are the pod annotations admission reads of the pods of
// its cache, which the server's pod cache keeps (its interceptors).
var PodAnnotationsRead = []string{podInterceptorsAnnotation}

// getPod looks the pod up (podlookup.Get): nil when it does not exist; a
// failed live read is a retryable 503.
func (p *Plugin) getPod(ctx context.Context, namespace, name, uid string) (*corev1.Pod, error) {
	pod, err := podlookup.Get(ctx, p.pods, p.client.CoreV1(), namespace, name, types.UID(uid))
	return pod, unavailable(err, namespace, name)
}

// livePod reads the pod from kube-apiserver, nil when it does not exist.
func (p *Plugin) livePod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	pod, err := podlookup.Live(ctx, p.client.CoreV1(), namespace, name)
	return pod, unavailable(err, namespace, name)
}

// unavailable turns a failed pod lookup into a 503 the client retries.
func unavailable(err error, namespace, name string) error {
	if err == nil {
		return nil
	}
	return apierrors.NewServiceUnavailable(fmt.Sprintf("looking up pod %s/%s: %v", namespace, name, err))
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
