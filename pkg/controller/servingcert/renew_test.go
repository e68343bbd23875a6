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
	"strings"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// policy is a year's validity, renewed 30 days ahead, a new CA trusted 5
// minutes before it signs: the chart's defaults.
var policy = Policy{Validity: 365 * 24 * time.Hour, RenewBefore: 30 * 24 * time.Hour, Overlap: 5 * time.Minute,
	DNSNames: []string{"evictionrequest-apiserver.evictionrequest-system.svc"}}

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// chartSecret is the Secret the chart generates, without the key of its CA
// unless withKey: a CA and a serving certificate issued at start.
func chartSecret(t *testing.T, withKey bool) map[string][]byte {
	t.Helper()
	ca, key, err := newCA(start, policy.Validity)
	if err != nil {
		t.Fatal(err)
	}
	p := &pair{cas: []*x509.Certificate{ca}, signer: key}
	leaf, leafKey, err := p.issue(start, policy)
	if err != nil {
		t.Fatal(err)
	}
	p.leaf = leaf
	data, err := p.encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	data[KeyKey] = leafKey
	if !withKey {
		delete(data, CAKeyKey)
	}
	return data
}

// A certificate outside its renewal window is kept, until it enters it.
func TestRenewKeepsWhatIsNotDue(t *testing.T) {
	data := chartSecret(t, true)
	r, err := Renew(start.Add(24*time.Hour), data, policy)
	if err != nil {
		t.Fatal(err)
	}
	if r.Data != nil {
		t.Errorf("renewed %s at once", r.Why)
	}
	if want := start.Add(policy.Validity - policy.RenewBefore); !r.Next.Equal(want) {
		t.Errorf("next look at %s, want %s (the renewal window)", r.Next, want)
	}
}

// A CA and serving certificate entering their renewal window are renewed
// in two steps: a new CA trusted beside the old, then, once it has been for
// the overlap, a serving certificate it signs. At every step the bundle
// verifies both the certificate served before and the one served after, and
// the old CA leaves the bundle only once it expired.
func TestRenewRotatesTheCAWithoutATimeNeitherIsTrusted(t *testing.T) {
	data := chartSecret(t, true)
	due := start.Add(policy.Validity - policy.RenewBefore)
	oldCA := mustParse(t, data[CACertKey])[0]

	r := mustRenew(t, due, data, "a new CA")
	if cas := mustParse(t, r.Data[CACertKey]); len(cas) != 2 || !cas[1].Equal(oldCA) {
		t.Fatalf("the bundle after a new CA: %d CAs, the old one second: %v; want both", len(cas), len(cas) == 2 && cas[1].Equal(oldCA))
	}
	if string(r.Data[CertKey]) != string(data[CertKey]) {
		t.Error("the serving certificate changed with the CA: kube-apiserver may not trust the new CA yet")
	}
	trusted(t, r.Data, data[CertKey], r.Data[CertKey])
	if want := due.Add(policy.Overlap); !r.Next.Equal(want) {
		t.Errorf("next look at %s, want the end of the overlap %s", r.Next, want)
	}
	data = r.Data

	if r := mustRenew(t, due.Add(policy.Overlap-time.Second), data, ""); !r.Next.Equal(due.Add(policy.Overlap)) {
		t.Errorf("during the overlap: next look at %s, want its end", r.Next)
	}

	r = mustRenew(t, due.Add(policy.Overlap), data, "a new serving certificate")
	trusted(t, r.Data, data[CertKey], r.Data[CertKey])
	if leaf := mustParse(t, r.Data[CertKey])[0]; leaf.CheckSignatureFrom(mustParse(t, r.Data[CACertKey])[0]) != nil {
		t.Error("the new serving certificate is not signed by the new CA")
	}
	if len(mustParse(t, r.Data[CACertKey])) != 2 {
		t.Error("the old CA left the bundle before it expired")
	}
	served := r.Data[CertKey]
	data = r.Data

	r = mustRenew(t, oldCA.NotAfter.Add(time.Second), data, "expired CAs left the bundle")
	if cas := mustParse(t, r.Data[CACertKey]); len(cas) != 1 || cas[0].Equal(oldCA) {
		t.Errorf("after the old CA expired the bundle holds %d CAs", len(cas))
	}
	trusted(t, r.Data, served)
}

// The chart's Secret of an earlier version has no key of its CA: the
// leader puts a CA of its own beside it, then serves what that one signs.
func TestRenewTakesOverASecretWithoutTheKeyOfItsCA(t *testing.T) {
	data := chartSecret(t, false)
	r := mustRenew(t, start.Add(time.Hour), data, "the Secret holds no key of its CA")
	trusted(t, r.Data, data[CertKey])
	r = mustRenew(t, start.Add(time.Hour+policy.Overlap), r.Data, "a new serving certificate")
	trusted(t, r.Data, data[CertKey], r.Data[CertKey])
}

// The policy refuses windows that would renew at once, or before the new
// CA is trusted.
func TestPolicyValidate(t *testing.T) {
	for _, p := range []Policy{
		{Validity: time.Hour, RenewBefore: time.Hour, Overlap: time.Minute},
		{Validity: time.Hour, RenewBefore: time.Minute, Overlap: time.Minute},
	} {
		if p.Validate() == nil {
			t.Errorf("%+v validated", p)
		}
	}
	if err := policy.Validate(); err != nil {
		t.Error(err)
	}
}

// mustRenew renews data at now and checks that it says why (changed) or
// changes nothing (why empty).
func mustRenew(t *testing.T, now time.Time, data map[string][]byte, why string) *Renewal {
	t.Helper()
	r, err := Renew(now, data, policy)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case why == "" && r.Data != nil:
		t.Fatalf("at %s: renewed (%s), want nothing", now, r.Why)
	case why != "" && (r.Data == nil || !strings.Contains(r.Why, why)):
		t.Fatalf("at %s: %q, want %q", now, r.Why, why)
	}
	return r
}

// trusted fails t unless the CA bundle of data verifies each of served.
func trusted(t *testing.T, data map[string][]byte, served ...[]byte) {
	t.Helper()
	pool := x509.NewCertPool()
	for _, ca := range mustParse(t, data[CACertKey]) {
		pool.AddCert(ca)
	}
	for _, s := range served {
		leaf := mustParse(t, s)[0]
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: policy.DNSNames[0], CurrentTime: leaf.NotBefore.Add(time.Minute)}); err != nil {
			t.Errorf("the bundle does not verify a served certificate: %v", err)
		}
	}
}

func mustParse(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return certs
}
