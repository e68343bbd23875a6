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

package integration

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdmissionFailsClosedWithoutPods runs the server with the EvictionRequest
// admission plugin in its chain and a cluster that never answers: the plugin
// is wired to our resource, so writes wait for its pod cache and are refused
// with a retryable 503 naming it instead of being admitted unchecked, while
// reads, which it does not handle, are served.
func TestAdmissionFailsClosedWithoutPods(t *testing.T) {
	s := startServer(t, strings.TrimSuffix(clusterPlugins, ",EvictionRequest"))
	c := s.clientset(t).CoordinationV1alpha1()

	// client-go retries a 503 with Retry-After; one answer is enough here.
	err := c.RESTClient().Post().Namespace(namespace).Resource("evictionrequests").
		Body(newEvictionRequest(1)).MaxRetries(0).Do(callContext(t)).Error()
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "EvictionRequest admission plugin") {
		t.Errorf("create without a pod cache: got %v, want 503 from the EvictionRequest admission plugin", err)
	}
	if list, err := c.EvictionRequests(namespace).List(callContext(t), metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("list: %v, %d items; want it served and empty", err, len(list.Items))
	}
}
