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

package bridge

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/component-base/metrics/testutil"

	"github.com/evictionrequest/apiserver/internal/pki"
	"github.com/evictionrequest/apiserver/pkg/bridge/metrics"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// kubeAPIServerName is the common name of kube-apiserver's client
// certificate in these tests.
const kubeAPIServerName = "kube-apiserver-eviction-bridge-client"

// clientCert issues a client certificate of ca named cn.
func clientCert(t *testing.T, ca *pki.Authority, cn string) *x509.Certificate {
	t.Helper()
	pair, err := ca.Sign(pki.Request{CommonName: cn, Usage: x509.ExtKeyUsageClientAuth, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pair.CertPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func newAuthority(t *testing.T, cn string) *pki.Authority {
	t.Helper()
	ca, err := pki.NewAuthority(cn)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// unreadBody fails the test when the handler reads the body.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("the body of a refused call was read")
	return 0, http.ErrBodyReadAfterClose
}

// callerCAs are kube-apiserver's CA for the bridge, which the returned
// authenticator trusts, and another; made in the test's bubble, whose
// clock certificates are checked against.
func callerCAs(t *testing.T) (kubeCA, otherCA *pki.Authority, callers *CallerAuthenticator) {
	t.Helper()
	kubeCA, otherCA = newAuthority(t, "eviction-bridge-client-ca"), newAuthority(t, "cluster-ca")
	ca, err := dynamiccertificates.NewStaticCAContent("eviction-bridge-client-ca", kubeCA.CertPEM())
	if err != nil {
		t.Fatal(err)
	}
	return kubeCA, otherCA, NewCallerAuthenticator(ca, []string{kubeAPIServerName})
}

// A call that does not prove it comes from kube-apiserver is refused
// before its body is read, with 401 without a certificate of the CA and 403
// for one of another name, and counted; kube-apiserver's is served.
func TestTheWebhookRefusesCallersOtherThanKubeAPIServer(t *testing.T) {
	metrics.Register()
	for _, tc := range []struct {
		name   string
		cert   func(t *testing.T, kubeCA, otherCA *pki.Authority) *x509.Certificate
		code   int
		reason string
	}{
		{"no certificate", func(*testing.T, *pki.Authority, *pki.Authority) *x509.Certificate { return nil },
			http.StatusUnauthorized, RefusedUnauthenticated},
		{"a certificate of another CA", func(t *testing.T, _, otherCA *pki.Authority) *x509.Certificate {
			return clientCert(t, otherCA, kubeAPIServerName)
		}, http.StatusUnauthorized, RefusedUnauthenticated},
		{"another name", func(t *testing.T, kubeCA, _ *pki.Authority) *x509.Certificate {
			return clientCert(t, kubeCA, "someone-else")
		},
			http.StatusForbidden, RefusedForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				kubeCA, otherCA, callers := callerCAs(t)
				pod := interceptedPod("db-0").Obj()
				f := newFixtureWith(t, evictionapi.Coordination, Config{Callers: callers}, pod)
				before, _ := testutil.GetCounterMetricValue(metrics.RefusedCalls.WithLabelValues(tc.reason))
				r := httptest.NewRequest(http.MethodPost, Path, unreadBody{t})
				if cert := tc.cert(t, kubeCA, otherCA); cert != nil {
					r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
				}
				w := httptest.NewRecorder()
				f.bridge.ServeHTTP(w, r)
				if w.Code != tc.code {
					t.Errorf("HTTP %d %q, want %d", w.Code, w.Body.String(), tc.code)
				}
				if after, _ := testutil.GetCounterMetricValue(metrics.RefusedCalls.WithLabelValues(tc.reason)); after != before+1 {
					t.Errorf("refused_calls_total{reason=%q} went from %v to %v, want one more", tc.reason, before, after)
				}
				// Nothing is decided, so nothing written: unreadBody fails the
				// test if the review is even read.
			})
		})
	}
	t.Run("kube-apiserver", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			kubeCA, _, callers := callerCAs(t)
			pod := interceptedPod("db-0").Obj()
			f := newFixtureWith(t, evictionapi.Coordination, Config{Callers: callers}, pod)
			cert := clientCert(t, kubeCA, kubeAPIServerName)
			f.reviewer = func(r *http.Request) { r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}} }
			code, response := f.review(pod.Namespace, pod.Name)
			if code != http.StatusOK || response == nil || response.Allowed {
				t.Fatalf("HTTP %d, response %+v: want kube-apiserver's review answered with a refusal", code, response)
			}
			if callers := f.status(pod).Annotations[CallersAnnotation]; callers != drainer {
				t.Errorf("callers %q, want %q as kube-apiserver authenticated it", callers, drainer)
			}
		})
	})
}

// The server that serves the bridge sees kube-apiserver under its name,
// an authenticated user (a flow of its own in priority and fairness), and
// any other caller as not authenticated, without an error: the bridge
// refuses those itself.
func TestTheServerSeesKubeAPIServerByName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kubeCA, otherCA, callers := callerCAs(t)
		for name, tc := range map[string]struct {
			cert *x509.Certificate
			want string
		}{
			"kube-apiserver":        {clientCert(t, kubeCA, kubeAPIServerName), kubeAPIServerName},
			"another name":          {clientCert(t, kubeCA, "someone-else"), ""},
			"another CA":            {clientCert(t, otherCA, kubeAPIServerName), ""},
			"without a certificate": {nil, ""},
		} {
			r := httptest.NewRequest(http.MethodPost, Path, nil)
			if tc.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tc.cert}}
			}
			resp, ok, err := callers.AuthenticateRequest(r)
			if err != nil || ok != (tc.want != "") {
				t.Errorf("%s: authenticated %v, error %v; want authenticated: %v and no error", name, ok, err, tc.want != "")
				continue
			}
			if ok && (resp.User.GetName() != tc.want || !slices.Contains(resp.User.GetGroups(), user.AllAuthenticated)) {
				t.Errorf("%s: user %+v, want %s in %s", name, resp.User, tc.want, user.AllAuthenticated)
			}
		}
	})
}
