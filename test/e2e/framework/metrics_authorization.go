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
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// MetricsReaderRole is the chart's ClusterRole of scrapers: get on the
// non-resource URL /metrics.
const MetricsReaderRole = "evictionrequest-metrics-reader"

// CheckMetricsAuthorization checks that the workload p serves /metrics only
// to callers kube-apiserver authorizes, as kube-controller-manager does: a
// caller without credentials is anonymous and gets 403, one with a token
// kube-apiserver does not know 401, a service account without the
// scrapers' ClusterRole 403, and the same service account 200 once bound to
// it; /healthz and /readyz answer anyone.
func (f *Framework) CheckMetricsAuthorization(t *testing.T, p *localcluster.Process) {
	t.Helper()
	ns := f.NewNamespace(t)
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback, a self-signed certificate
	for _, path := range []string{"/healthz", "/readyz"} {
		url := strings.TrimSuffix(p.MetricsURL, "/metrics") + path
		if status, body := GetMetrics(t, anonymous, url, ""); status != http.StatusOK {
			t.Errorf("GET %s without credentials: %d %s, want 200: kubelet's probes present none", url, status, body)
		}
	}
	if status, body := GetMetrics(t, anonymous, p.MetricsURL, ""); status != http.StatusForbidden {
		t.Errorf("GET %s without credentials: %d %s, want 403", p.MetricsURL, status, body)
	}
	if status, body := GetMetrics(t, anonymous, p.MetricsURL, "forged"); status != http.StatusUnauthorized {
		t.Errorf("GET %s with a forged token: %d %s, want 401", p.MetricsURL, status, body)
	}
	token := f.serviceAccountToken(t, ns, "scraper")
	if status, body := GetMetrics(t, anonymous, p.MetricsURL, token); status != http.StatusForbidden {
		t.Errorf("GET %s as a service account without %s: %d %s, want 403", p.MetricsURL, MetricsReaderRole, status, body)
	}
	f.bindClusterRole(t, ns, "scraper", MetricsReaderRole)
	// The server caches a denial for 10 s (--authorization-webhook-cache-unauthorized-ttl).
	var metrics MetricSamples
	Eventually(t, time.Minute, "the bound scraper to read "+p.MetricsURL, func(context.Context) error {
		status, body := GetMetrics(t, anonymous, p.MetricsURL, token)
		if status != http.StatusOK {
			return fmt.Errorf("%d %.200s", status, body)
		}
		metrics = body
		return nil
	})
	CheckServingCertificateExpiry(t, metrics, "metrics")
}

// CheckServingCertificateExpiry fails t unless m reports the expiry of the
// certificate the server of that label serves, in the future, as the
// monitoring component's expiry alerts read it.
func CheckServingCertificateExpiry(t testing.TB, m MetricSamples, server string) {
	t.Helper()
	CheckMonitoredMetrics(t, m, "evictionrequest_serving_certificate_")
	sample := `evictionrequest_serving_certificate_expiration_timestamp_seconds{server="` + server + `"}`
	if v := m.Sample(t, sample); v < float64(time.Now().Unix()) {
		t.Errorf("%s = %v, want the future not-after of the certificate served", sample, v)
	}
}

// serviceAccountToken creates the service account name in ns and returns
// a token of it.
func (f *Framework) serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := t.Context()
	accounts := f.Kube.CoreV1().ServiceAccounts(ns)
	if _, err := accounts.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := accounts.CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// bindClusterRole binds role to the service account name of ns until the
// test ends.
func (f *Framework) bindClusterRole(t *testing.T, ns, name, role string) {
	t.Helper()
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + ":" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	bindings := f.Kube.RbacV1().ClusterRoleBindings()
	if _, err := bindings.Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bindings.Delete(context.Background(), binding.Name, metav1.DeleteOptions{}) })
}
