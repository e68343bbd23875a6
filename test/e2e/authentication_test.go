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
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
)

func TestUserWithoutRBACIsForbidden(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)

	clientset, err := versioned.NewForConfig(f.ImpersonatingConfig("mallory"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = clientset.CoordinationV1alpha1().EvictionRequests(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("list as a user without RBAC: %v, want 403 Forbidden", err)
	}

	r := f.Kubectl(t, "--as=mallory", "get", "evictionrequests", "-n", ns)
	if r.Err == nil || !strings.Contains(r.Stderr, "Forbidden") || !strings.Contains(r.Stderr, `cannot list resource "evictionrequests"`) {
		t.Errorf("kubectl --as=mallory get evictionrequests: err %v, stderr %q; want Forbidden naming evictionrequests", r.Err, r.Stderr)
	}
}

func TestUnauthenticatedRequestIsUnauthorized(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.AdminConfig.CAData)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.AdminConfig.Host+"/apis/coordination.k8s.io/v1alpha1/evictionrequests", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET evictionrequests without credentials: %d, want 401", resp.StatusCode)
	}
}
