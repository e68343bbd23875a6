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

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
)

// SelfAuthenticatedOn hands the requests to the given paths, matched
// exactly, to their handlers as system:anonymous without running delegate:
// those handlers authenticate their callers themselves, with credentials
// delegated authentication does not know. The eviction API bridge is one:
// kube-apiserver calls it with the client certificate of its admission
// configuration, of a CA the cluster's client CA need not be, which
// delegated authentication would refuse with 401 before the bridge saw it.
// Authorization must let the paths through (AlwaysAllowPaths).
func SelfAuthenticatedOn(paths []string, delegate authenticator.Request) authenticator.Request {
	if len(paths) == 0 {
		return delegate
	}
	own := sets.New(paths...)
	anonymousUser := anonymous.NewAuthenticator(nil)
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		if own.Has(req.URL.Path) {
			return anonymousUser.AuthenticateRequest(req)
		}
		return delegate.AuthenticateRequest(req)
	})
}
