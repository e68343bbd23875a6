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
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// answers stands for delegated authentication: it returns the given user,
// or an error.
func answers(name string, err error) authenticator.Request {
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		if err != nil {
			return nil, false, err
		}
		// As the request header authenticator does once it took a request.
		req.Header.Del(frontProxyUserHeader)
		return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
	})
}

func TestAnonymousOnlyOn(t *testing.T) {
	withCert := func(req *http.Request) {
		req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{}}}
	}
	proxiedAnonymous := func(req *http.Request) {
		withCert(req)
		req.Header.Set(frontProxyUserHeader, user.Anonymous)
	}
	failure := errors.New("x509: certificate signed by unknown authority")
	for name, tc := range map[string]struct {
		path     string
		delegate authenticator.Request
		request  func(*http.Request)
		wantUser string
		wantErr  bool
	}{
		"anonymous on a health check is kept":             {path: "/readyz", delegate: answers(user.Anonymous, nil), wantUser: user.Anonymous},
		"anonymous elsewhere is not authenticated":        {path: "/apis/coordination.k8s.io/v1alpha1/evictionrequests", delegate: answers(user.Anonymous, nil)},
		"a sub-path of a health check is not a match":     {path: "/readyz/etcd", delegate: answers(user.Anonymous, nil)},
		"an authenticated user is kept everywhere":        {path: "/apis", delegate: answers("alice", nil), wantUser: "alice"},
		"an error is kept":                                {path: "/readyz", delegate: answers("", failure), wantErr: true},
		"the aggregator's anonymous user is kept":         {path: "/apis", delegate: answers(user.Anonymous, nil), request: proxiedAnonymous, wantUser: user.Anonymous},
		"the header without a certificate proves nothing": {path: "/apis", delegate: answers(user.Anonymous, nil), request: func(r *http.Request) { r.Header.Set(frontProxyUserHeader, user.Anonymous) }},
		"a certificate without the header proves nothing": {path: "/apis", delegate: answers(user.Anonymous, nil), request: withCert},
	} {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "https://127.0.0.1"+tc.path, nil)
			if tc.request != nil {
				tc.request(req)
			}
			resp, ok, err := AnonymousOnlyOn(tc.delegate, []string{"/healthz", "/livez", "/readyz"}).AuthenticateRequest(req)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tc.wantErr)
			}
			got := ""
			if ok {
				got = resp.User.GetName()
			}
			if got != tc.wantUser {
				t.Errorf("user = %q, want %q", got, tc.wantUser)
			}
		})
	}
}
