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
