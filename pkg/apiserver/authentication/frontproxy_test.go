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

package authentication

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	certutil "k8s.io/client-go/util/cert"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/pki"
)

// countingCA is a request-header CA whose bundle a test can replace, and
// which counts the verifications made against it.
type countingCA struct {
	dynamiccertificates.CAContentProvider
	verifications int
}

func (c *countingCA) VerifyOptions() (x509.VerifyOptions, bool) {
	c.verifications++
	return c.CAContentProvider.VerifyOptions()
}

func newStaticCA(t *testing.T, ca *pki.Authority) dynamiccertificates.CAContentProvider {
	t.Helper()
	content, err := dynamiccertificates.NewStaticCAContent("front-proxy-ca", ca.CertPEM())
	if err != nil {
		t.Fatal(err)
	}
	return content
}

func clientCert(t *testing.T, ca *pki.Authority, commonName string, validity time.Duration) *x509.Certificate {
	t.Helper()
	pair, err := ca.Sign(pki.Request{CommonName: commonName, Usage: x509.ExtKeyUsageClientAuth, Validity: validity})
	if err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(pair.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certs[0]
}

// frontProxyStep is one request: the certificate it presents (none when
// nil), what happens before it, and what the authenticator must answer.
type frontProxyStep struct {
	cert              *x509.Certificate
	before            func(clock *testingclock.FakeClock, ca *countingCA)
	wantUser          string
	wantVerifications int
}

// frontProxyCase is a series of requests to one authenticator.
type frontProxyCase struct {
	name  string
	steps []frontProxyStep
}

// frontProxyCases are the cases of TestFrontProxyAuthenticator, with
// certificates of the front-proxy CA and of another.
func frontProxyCases(t *testing.T, frontProxyCA, otherCA *pki.Authority) []frontProxyCase {
	proxy := clientCert(t, frontProxyCA, "front-proxy-client", time.Hour)
	shortLived := clientCert(t, frontProxyCA, "front-proxy-client", 30*time.Second)
	return []frontProxyCase{{
		name: "a chain is verified once and then remembered",
		steps: []frontProxyStep{
			{cert: proxy, wantUser: "alice", wantVerifications: 1},
			{cert: proxy, wantUser: "alice", wantVerifications: 1},
		},
	}, {
		name: "a remembered chain is verified again after frontProxyVerifiedFor",
		steps: []frontProxyStep{
			{cert: proxy, wantUser: "alice", wantVerifications: 1},
			{cert: proxy, before: func(clock *testingclock.FakeClock, _ *countingCA) {
				clock.Step(frontProxyVerifiedFor)
			}, wantUser: "alice", wantVerifications: 2},
		},
	}, {
		name: "a rotated CA bundle verifies again and refuses what it did not sign",
		steps: []frontProxyStep{
			{cert: proxy, wantUser: "alice", wantVerifications: 1},
			{cert: proxy, before: func(_ *testingclock.FakeClock, ca *countingCA) {
				ca.CAContentProvider = newStaticCA(t, otherCA)
			}, wantVerifications: 2},
		},
	}, {
		name: "a chain is not trusted past its certificate's expiry",
		steps: []frontProxyStep{
			{cert: shortLived, wantUser: "alice", wantVerifications: 1},
			{cert: shortLived, before: func(clock *testingclock.FakeClock, _ *countingCA) {
				clock.Step(31 * time.Second)
			}, wantVerifications: 2},
		},
	}, {
		name: "a certificate of another CA is refused, every time",
		steps: []frontProxyStep{
			{cert: clientCert(t, otherCA, "front-proxy-client", time.Hour), wantVerifications: 1},
			{cert: clientCert(t, otherCA, "front-proxy-client", time.Hour), wantVerifications: 2},
		},
	}, {
		name:  "a common name not allowed is refused",
		steps: []frontProxyStep{{cert: clientCert(t, frontProxyCA, "someone-else", time.Hour), wantVerifications: 1}},
	}, {
		name:  "a request without a certificate is not the front proxy's",
		steps: []frontProxyStep{{wantVerifications: 0}},
	}}
}

func TestFrontProxyAuthenticator(t *testing.T) {
	frontProxyCA, err := pki.NewAuthority("front-proxy-ca")
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := pki.NewAuthority("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range frontProxyCases(t, frontProxyCA, otherCA) {
		t.Run(tc.name, func(t *testing.T) {
			clock := testingclock.NewFakeClock(time.Now())
			ca := &countingCA{CAContentProvider: newStaticCA(t, frontProxyCA)}
			a := NewFrontProxyAuthenticator(&authenticatorfactory.RequestHeaderConfig{
				CAContentProvider:   ca,
				AllowedClientNames:  headerrequest.StaticStringSlice{"front-proxy-client"},
				UsernameHeaders:     headerrequest.StaticStringSlice{"X-Remote-User"},
				UIDHeaders:          headerrequest.StaticStringSlice{},
				GroupHeaders:        headerrequest.StaticStringSlice{"X-Remote-Group"},
				ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"},
			}, clock)
			for i, s := range tc.steps {
				if s.before != nil {
					s.before(clock, ca)
				}
				authenticateStep(t, a, i, s, ca)
			}
		})
	}
}

// authenticateStep sends the request of step i to a and checks the answer.
func authenticateStep(t *testing.T, a authenticator.Request, i int, s frontProxyStep, ca *countingCA) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/apis", nil)
	req.Header.Set("X-Remote-User", "alice")
	req.Header.Set("X-Remote-Group", "team")
	if s.cert != nil {
		req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{s.cert}}
	}
	resp, ok, err := a.AuthenticateRequest(req)
	if err != nil {
		t.Fatalf("request %d: %v", i, err)
	}
	got := ""
	if ok {
		got = resp.User.GetName()
		if groups := resp.User.GetGroups(); len(groups) != 1 || groups[0] != "team" {
			t.Errorf("request %d: groups = %v, want [team]", i, groups)
		}
		if h := req.Header.Get("X-Remote-User"); h != "" {
			t.Errorf("request %d: X-Remote-User still set to %q after authentication", i, h)
		}
	}
	if got != s.wantUser {
		t.Errorf("request %d: user = %q, want %q", i, got, s.wantUser)
	}
	if ca.verifications != s.wantVerifications {
		t.Errorf("request %d: %d verifications, want %d", i, ca.verifications, s.wantVerifications)
	}
}
