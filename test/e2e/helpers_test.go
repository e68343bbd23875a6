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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// parkedInterceptor is the interceptor of pods in API tests: it never
// answers, so the controller selects it and then waits out its 30-minute
// heartbeat deadline instead of evicting the pod while the test runs.
const parkedInterceptor = "parked.e2e.example.com"

// parkedPod creates a running pod whose EvictionRequests stay in progress.
func parkedPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	return f.CreatePod(t, ns, name, framework.PodOptions{Interceptors: []string{parkedInterceptor}})
}

// update applies mutate to the latest version of an EvictionRequest and
// writes it through the main resource, or through /status when status is
// true; a conflict with the controller's writes is retried.
func update(t *testing.T, ns, name string, status bool, mutate func(*v1alpha1.EvictionRequest)) (*v1alpha1.EvictionRequest, error) {
	t.Helper()
	ctx := t.Context()
	client := f.EvictionRequests(ns)
	var updated *v1alpha1.EvictionRequest
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		er, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(er)
		if status {
			updated, err = client.UpdateStatus(ctx, er, metav1.UpdateOptions{})
		} else {
			updated, err = client.Update(ctx, er, metav1.UpdateOptions{})
		}
		return err
	})
	return updated, err
}

// setStatus writes the status of an EvictionRequest as an interceptor or the
// controller would.
func setStatus(t *testing.T, ns, name string, mutate func(*v1alpha1.EvictionRequest)) *v1alpha1.EvictionRequest {
	t.Helper()
	updated, err := update(t, ns, name, true, mutate)
	if err != nil {
		t.Fatalf("updating the status of %s: %v", name, err)
	}
	return updated
}

// updateRequesters replaces the requesters of an EvictionRequest.
func updateRequesters(t *testing.T, ns, name string, requesters ...string) error {
	t.Helper()
	_, err := update(t, ns, name, false, func(er *v1alpha1.EvictionRequest) {
		er.Spec.Requesters = nil
		for _, r := range requesters {
			er.Spec.Requesters = append(er.Spec.Requesters, v1alpha1.Requester{Name: r})
		}
	})
	return err
}

// invalidFields returns the fields a 422 names, failing the test on any
// other error.
func invalidFields(t *testing.T, err error) []string {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want a 422 Invalid", err)
	}
	var fields []string
	for _, cause := range err.(apierrors.APIStatus).Status().Details.Causes {
		fields = append(fields, cause.Field)
	}
	return fields
}

// interceptorPolicyOptOut labels a namespace the ValidatingAdmissionPolicy
// of the pods' interceptor annotation does not apply to.
const interceptorPolicyOptOut = "evictionrequest.coordination.k8s.io/interceptor-annotation-policy"

// exemptFromInterceptorPolicy takes namespace ns out of the policy that
// checks the pods' interceptor annotation.
func exemptFromInterceptorPolicy(t *testing.T, ns string) {
	t.Helper()
	patch := []byte(`{"metadata":{"labels":{"` + interceptorPolicyOptOut + `":"disabled"}}}`)
	if _, err := f.Kube.CoreV1().Namespaces().Patch(t.Context(), ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
