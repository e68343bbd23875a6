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

package controllermanager

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2/ktesting"
)

// /metrics is served over TLS to the callers the authenticator knows and
// the authorizer lets get it: one without credentials is anonymous and
// forbidden, one with credentials the authenticator refuses is
// unauthorized; the health checks are open to anyone, as
// kube-controller-manager's --authorization-always-allow-paths.
func TestServeAuthorizesMetricsAndOpensHealthChecks(t *testing.T) {
	s := metricsServer(t)
	_, ctx := ktesting.NewTestContext(t)
	stop, err := Serve(ctx, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	base := "https://" + s.Serving.Listener.Addr().String()
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/metrics", "scraper", http.StatusOK},
		{"/metrics", "", http.StatusForbidden},
		{"/metrics", "someone", http.StatusForbidden},
		{"/metrics", "forged", http.StatusUnauthorized},
		{"/healthz", "", http.StatusOK},
		{"/readyz", "", http.StatusOK},
	} {
		if got := get(ctx, t, base+tc.path, tc.token); got != tc.want {
			t.Errorf("GET %s with token %q: %d, want %d", tc.path, tc.token, got, tc.want)
		}
	}
}

// metricsServer serves on a free loopback port with a self-signed
// certificate; tokens "scraper" and "someone" name users, and only the
// scraper may get /metrics. A request without a token is anonymous, one with
// another token refused, as with kube-apiserver's delegated authentication.
func metricsServer(t *testing.T) *MetricsServer {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := dynamiccertificates.NewStaticCertKeyContent("test", certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tokens := authenticator.TokenFunc(func(_ context.Context, token string) (*authenticator.Response, bool, error) {
		if token == "scraper" || token == "someone" {
			return &authenticator.Response{User: &user.DefaultInfo{Name: token}}, true, nil
		}
		return nil, false, nil
	})
	// As kube-controller-manager's: the health checks always allowed,
	// /metrics to whom kube-apiserver allows it (here, the scraper).
	alwaysAllowed, err := path.NewAuthorizer([]string{"/healthz", "/readyz", "/livez"})
	if err != nil {
		t.Fatal(err)
	}
	authz := authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if d, reason, err := alwaysAllowed.Authorize(ctx, a); d == authorizer.DecisionAllow || err != nil {
			return d, reason, err
		}
		if a.GetUser().GetName() == "scraper" && !a.IsResourceRequest() && a.GetPath() == "/metrics" && a.GetVerb() == "get" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	return &MetricsServer{
		Serving:        &server.SecureServingInfo{Listener: listener, Cert: cert},
		Authentication: server.AuthenticationInfo{Authenticator: union.NewFailOnError(bearertoken.New(tokens), anonymous.NewAuthenticator(nil))},
		Authorization:  server.AuthorizationInfo{Authorizer: authz},
	}
}

// get is the status of GET url with token as bearer token, if any.
func get(ctx context.Context, t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a self-signed test certificate
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// Until delegated authentication has loaded the client CAs (an informer's
// moment after the start), /readyz fails: a scraper's client certificate
// would not be asked for, and it would be served as anonymous.
func TestServeIsNotReadyUntilTheClientCAIsLoaded(t *testing.T) {
	s := metricsServer(t)
	ca := &loadingCA{}
	s.Serving.ClientCA = ca
	_, ctx := ktesting.NewTestContext(t)
	stop, err := Serve(ctx, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	readyz := "https://" + s.Serving.Listener.Addr().String() + "/readyz"
	if got := get(ctx, t, readyz, ""); got == http.StatusOK {
		t.Errorf("GET /readyz before the client CA is loaded: %d, want a failure", got)
	}
	certPEM, _, err := certutil.GenerateSelfSignedCertKey("client-ca", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ca.content.Store(&certPEM)
	if got := get(ctx, t, readyz, ""); got != http.StatusOK {
		t.Errorf("GET /readyz once the client CA is loaded: %d, want 200", got)
	}
}

// loadingCA is a client CA whose bundle arrives later, as the ConfigMap's.
type loadingCA struct{ content atomic.Pointer[[]byte] }

func (c *loadingCA) Name() string { return "loading" }
func (c *loadingCA) CurrentCABundleContent() []byte {
	if p := c.content.Load(); p != nil {
		return *p
	}
	return nil
}
func (c *loadingCA) VerifyOptions() (x509.VerifyOptions, bool) { return x509.VerifyOptions{}, false }
func (c *loadingCA) AddListener(dynamiccertificates.Listener)  {}
