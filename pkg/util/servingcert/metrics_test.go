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

package servingcert

import (
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/evictionrequest/apiserver/internal/pki"
)

// The metric reports the not-after of the certificate a server serves now:
// when the certificate changes, so does the next scrape.
func TestExpirationFollowsTheServedCertificate(t *testing.T) {
	ca, err := pki.NewAuthority("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	provider := &swappable{}
	for _, validity := range []time.Duration{time.Hour, 48 * time.Hour} {
		certPEM, keyPEM, notAfter := issue(t, ca, validity)
		provider.cert, provider.key = certPEM, keyPEM
		Register("test", provider)
		want := fmt.Sprintf(`
# HELP evictionrequest_serving_certificate_expiration_timestamp_seconds [ALPHA] When the serving certificate of each server of the process expires (its not-after, in seconds since the epoch), by server: apiserver, eviction-bridge or metrics. Read at each scrape from the certificate served now.
# TYPE evictionrequest_serving_certificate_expiration_timestamp_seconds gauge
evictionrequest_serving_certificate_expiration_timestamp_seconds{server="test"} %d
`, notAfter.Unix())
		if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want),
			"evictionrequest_serving_certificate_expiration_timestamp_seconds"); err != nil {
			t.Errorf("valid for %s: %v", validity, err)
		}
	}
}

// swappable serves whatever certificate the test set last.
type swappable struct{ cert, key []byte }

var _ dynamiccertificates.CertKeyContentProvider = &swappable{}

func (s *swappable) Name() string                              { return "test" }
func (s *swappable) CurrentCertKeyContent() (cert, key []byte) { return s.cert, s.key }
func (s *swappable) AddListener(dynamiccertificates.Listener)  {}

// issue signs a serving certificate valid for validity and returns it, its
// key and its not-after.
func issue(t *testing.T, ca *pki.Authority, validity time.Duration) (certPEM, keyPEM []byte, notAfter time.Time) {
	t.Helper()
	pair, err := ca.Sign(pki.Request{CommonName: "server", DNSNames: []string{"server"}, Usage: x509.ExtKeyUsageServerAuth, Validity: validity})
	if err != nil {
		t.Fatal(err)
	}
	leaf, ok := Leaf(pair.CertPEM)
	if !ok {
		t.Fatal("the signed certificate does not parse")
	}
	return pair.CertPEM, pair.KeyPEM, leaf.NotAfter
}
