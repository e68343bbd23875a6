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

package integration

import (
	"crypto/x509"
	"net/http"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/internal/pki"
)

// TestFrontProxyAuthentication sends requests as kube-apiserver's
// aggregator does, a certificate of the request-header CA and the user in
// headers, and as impostors do, to a server configured as the aggregator
// configures it. The server remembers verified front-proxy certificates:
// the same certificate must still carry each request's own user, and only
// the front proxy's certificate may name one.
func TestFrontProxyAuthentication(t *testing.T) {
	frontProxyCA, err := pki.NewAuthority("front-proxy")
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, clusterPlugins,
		"--requestheader-client-ca-file="+writeFile(t, t.TempDir(), "front-proxy-ca.crt", frontProxyCA.CertPEM()),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
	)
	withCert := func(pair *pki.KeyPair) *http.Client {
		config := rest.CopyConfig(s.anonymous)
		config.CertData, config.KeyData = pair.CertPEM, pair.KeyPEM
		client, err := rest.HTTPClientFor(config)
		if err != nil {
			t.Fatal(err)
		}
		return client
	}
	proxy := withCert(sign(t, frontProxyCA, pki.Request{CommonName: "front-proxy-client", Usage: x509.ExtKeyUsageClientAuth}))
	intruder := withCert(sign(t, frontProxyCA, pki.Request{CommonName: "intruder", Usage: x509.ExtKeyUsageClientAuth}))
	stranger, err := rest.HTTPClientFor(s.stranger)
	if err != nil {
		t.Fatal(err)
	}

	// In order: the first requests of the front proxy's certificate are
	// verified, the later ones remembered.
	for _, tc := range []struct {
		name   string
		client *http.Client
		user   string
		groups []string
		want   int
	}{
		{"the front proxy's user in system:masters is served", proxy, "alice", []string{"system:masters"}, http.StatusOK},
		{"the front proxy's next user, outside system:masters, is forbidden", proxy, "bob", nil, http.StatusForbidden},
		{"the front proxy's user in system:masters again is served", proxy, "alice", []string{"system:masters"}, http.StatusOK},
		{"a client certificate of the cluster's CA cannot name a user in headers", stranger, "alice", []string{"system:masters"}, http.StatusForbidden},
		{"a certificate of the request-header CA with a name not allowed is unauthorized", intruder, "alice", []string{"system:masters"}, http.StatusUnauthorized},
		{"the front proxy's certificate without a user is unauthorized", proxy, "", nil, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(callContext(t), http.MethodGet,
				s.anonymous.Host+"/apis/coordination.k8s.io/v1alpha1/namespaces/"+namespace+"/evictionrequests", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.user != "" {
				req.Header.Set("X-Remote-User", tc.user)
			}
			for _, g := range tc.groups {
				req.Header.Add("X-Remote-Group", g)
			}
			resp, err := tc.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("GET evictionrequests: %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
