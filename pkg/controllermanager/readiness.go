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
	"errors"
	"net/http"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
)

// ClientCAReadyCheck keeps a server out of /readyz until it knows the CAs
// of client certificates. With delegated authentication they come from the
// extension-apiserver-authentication ConfigMap through an informer, which
// fills a moment after the server starts listening; in that moment a
// client certificate is not asked for, and its caller (a request the
// aggregator proxies, a scraper of /metrics) is served as
// system:anonymous. evictionrequest-apiserver and the metrics servers of
// the other components check it.
func ClientCAReadyCheck(clientCA, requestHeaderCA dynamiccertificates.CAContentProvider) healthz.HealthChecker {
	return healthz.NamedCheck("client-ca-loaded", func(*http.Request) error {
		if clientCA != nil && len(clientCA.CurrentCABundleContent()) == 0 {
			return errors.New("the client CA bundle is not loaded yet")
		}
		if requestHeaderCA != nil && len(requestHeaderCA.CurrentCABundleContent()) == 0 {
			return errors.New("the request header (front proxy) CA bundle is not loaded yet")
		}
		return nil
	})
}
