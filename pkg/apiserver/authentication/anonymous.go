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

// Package authentication holds the server's authenticators besides the ones
// k8s.io/apiserver's delegated authentication builds: the front-proxy
// authenticator that remembers verified certificate chains, the
// restriction of anonymous requests to some paths, and the paths whose
// handlers authenticate their callers themselves.
package authentication

import (
	"net/http"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// frontProxyUserHeader is the header in which the aggregator names the user
// it authenticated (--requestheader-username-headers defaults to it).
const frontProxyUserHeader = "X-Remote-User"

// AnonymousOnlyOn restricts the anonymous user that delegated
// authentication falls back to, for a request no authenticator recognized,
// to the given paths; elsewhere such a request is not authenticated, and the
// server answers 401. k8s.io/apiserver always appends that fallback and
// ignores DelegatingAuthenticationOptions.Anonymous, hence the wrapper.
//
// A user the aggregator authenticated as system:anonymous, proxied with a
// verified front-proxy certificate, is kept: kube-apiserver decided to
// serve it, and authorization decides the rest.
func AnonymousOnlyOn(delegate authenticator.Request, paths []string) authenticator.Request {
	allowed := sets.New(paths...)
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		// Read before authentication, which strips the proxy's headers.
		proxied := proxiedAsAnonymous(req)
		resp, ok, err := delegate.AuthenticateRequest(req)
		if !ok || resp.User.GetName() != user.Anonymous || proxied || allowed.Has(req.URL.Path) {
			return resp, ok, err
		}
		return nil, false, err
	})
}

// proxiedAsAnonymous tells a request the front proxy may have sent for its
// anonymous user from one that came without credentials. A client
// certificate the server does not trust fails authentication before the
// fallback, and one of the client CA authenticates its own user, so an
// anonymous result with a certificate and this header comes from the
// front proxy.
func proxiedAsAnonymous(req *http.Request) bool {
	return req.TLS != nil && len(req.TLS.PeerCertificates) > 0 && req.Header.Get(frontProxyUserHeader) == user.Anonymous
}
