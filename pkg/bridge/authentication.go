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
	"errors"
	"fmt"
	"net/http"
	"slices"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// Reasons a call of the webhook is refused before its body is read, the
// label of the refused calls metric.
const (
	// RefusedUnauthenticated: no client certificate, or one the CA of
	// CallerAuthenticator did not sign.
	RefusedUnauthenticated = "unauthenticated"
	// RefusedForbidden: a certificate of the CA whose common name is not
	// one of the allowed names.
	RefusedForbidden = "forbidden"
)

// CallerAuthenticator tells kube-apiserver's calls of the webhook from any
// other: kube-apiserver presents the client certificate its admission
// configuration gives it for the webhook's Service (the
// ValidatingAdmissionWebhook plugin's kubeConfigFile), and only a
// certificate of the CA, with one of the allowed common names when any are
// given, is kube-apiserver's. The bridge acts with its own rights for
// whoever calls it, so nothing else may.
type CallerAuthenticator struct {
	certificates authenticator.Request
	allowedNames []string
}

// NewCallerAuthenticator accepts the client certificates ca signs whose
// common name is one of allowedNames (any, when empty). ca may change
// while the process runs (a file it reloads).
func NewCallerAuthenticator(ca dynamiccertificates.CAContentProvider, allowedNames []string) *CallerAuthenticator {
	return &CallerAuthenticator{
		certificates: x509request.NewDynamic(ca.VerifyOptions, x509request.CommonNameUserConversion),
		allowedNames: allowedNames,
	}
}

// errCallerRefused is the error of a refused call.
type errCallerRefused struct {
	reason string
	err    error
}

func (e *errCallerRefused) Error() string { return e.err.Error() }

// code is the HTTP status of a refusal: 401 for a caller the bridge does
// not know, 403 for one it knows and does not serve.
func (e *errCallerRefused) code() int {
	if e.reason == RefusedForbidden {
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

// Authenticate returns the common name of the caller of r, or an
// errCallerRefused.
func (a *CallerAuthenticator) Authenticate(r *http.Request) (string, error) {
	resp, ok, err := a.certificates.AuthenticateRequest(r)
	if !ok {
		if err == nil {
			err = errors.New("a client certificate of kube-apiserver is required")
		}
		return "", &errCallerRefused{reason: RefusedUnauthenticated, err: err}
	}
	name := resp.User.GetName()
	if len(a.allowedNames) > 0 && !slices.Contains(a.allowedNames, name) {
		return "", &errCallerRefused{reason: RefusedForbidden,
			err: fmt.Errorf("client certificate %q is not one of the allowed names %v", name, a.allowedNames)}
	}
	return name, nil
}

// AuthenticateRequest names kube-apiserver, when r is its call, to the
// filters of the server that serves the bridge: priority and fairness
// then queue its calls in a flow of their own, not in the flow of every
// caller without credentials. Others are not authenticated, and not
// refused here: the bridge refuses them itself (Authenticate).
func (a *CallerAuthenticator) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	name, err := a.Authenticate(r)
	if err != nil {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name, Groups: []string{user.AllAuthenticated}}}, true, nil
}
