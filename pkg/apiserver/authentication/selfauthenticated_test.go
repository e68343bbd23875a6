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
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// A path whose handler authenticates its callers reaches it without
// delegated authentication, whatever it would say of its credentials (a
// client certificate of a CA it does not trust fails it): as the caller
// the path's own authenticator names (kube-apiserver, for a flow of its
// own in priority and fairness), else as system:anonymous; every other
// path is delegated authentication's.
func TestSelfAuthenticatedOn(t *testing.T) {
	failure := errors.New("x509: certificate signed by unknown authority")
	refused := errors.New("a client certificate of kube-apiserver is required")
	for name, tc := range map[string]struct {
		path     string
		own      authenticator.Request
		wantUser string
		wantErr  bool
	}{
		"the bridge's path":                            {path: "/eviction-bridge", wantUser: user.Anonymous},
		"the bridge's path, kube-apiserver":            {path: "/eviction-bridge", own: answers("kube-apiserver", nil), wantUser: "kube-apiserver"},
		"the bridge's path, a caller it does not know": {path: "/eviction-bridge", own: answers("", refused), wantUser: user.Anonymous},
		"a sub-path is not a match":                    {path: "/eviction-bridge/x", own: answers("kube-apiserver", nil), wantErr: true},
		"another path is delegated":                    {path: "/apis", own: answers("kube-apiserver", nil), wantErr: true},
		"a prefix is not a match":                      {path: "/eviction", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "https://127.0.0.1"+tc.path, nil)
			resp, ok, err := SelfAuthenticatedOn([]string{"/eviction-bridge"}, tc.own, answers("", failure)).AuthenticateRequest(req)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tc.wantErr)
			}
			if got := ""; ok {
				if got = resp.User.GetName(); got != tc.wantUser {
					t.Errorf("user %q, want %q", got, tc.wantUser)
				}
			} else if tc.wantUser != "" {
				t.Errorf("not authenticated, want %q", tc.wantUser)
			}
		})
	}
}
