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
	"net/http"
	"slices"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
)

// SelfAuthenticatedOn hands the requests to the given paths, matched
// exactly, to their handlers without running delegate: those handlers
// authenticate their callers themselves, with credentials delegated
// authentication does not know. The eviction API bridge is one:
// kube-apiserver calls it with the client certificate of its admission
// configuration, of a CA the cluster's client CA need not be, which
// delegated authentication would refuse with 401 before the bridge saw it.
// A caller own (may be nil) authenticates reaches the handler as own names
// it, so that priority and fairness give it a flow of its own; any other
// as system:anonymous. Authorization must let the paths through
// (AlwaysAllowPaths).
func SelfAuthenticatedOn(paths []string, own, delegate authenticator.Request) authenticator.Request {
	if len(paths) == 0 {
		return delegate
	}
	paths = slices.Clone(paths)
	anonymousUser := anonymous.NewAuthenticator(nil)
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		if !slices.Contains(paths, req.URL.Path) {
			return delegate.AuthenticateRequest(req)
		}
		if own != nil {
			if resp, ok, err := own.AuthenticateRequest(req); ok && err == nil {
				return resp, true, nil
			}
		}
		return anonymousUser.AuthenticateRequest(req)
	})
}
