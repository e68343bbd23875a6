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

// Package servingcert renews, on the leader of evictionrequest-apiserver,
// the serving certificate the chart generates (and the CA that signs it)
// in its Secret before either expires, as cert-manager's webhook renews its
// own: a new CA is trusted (the APIService's and the bridge webhook's
// caBundle, the Secret's ca.crt) beside the old one before any certificate
// it signs is served, and the old one stays trusted until it expires, so
// that kube-apiserver never meets a certificate it does not trust. The
// servers read the Secret's files, which kubelet updates, and reload them.
package servingcert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Keys of the Secret: kubernetes.io/tls's tls.crt and tls.key, the CA
// bundle kube-apiserver trusts, and the key of the bundle's first CA, which
// signs the serving certificate.
const (
	CertKey   = "tls.crt"
	KeyKey    = "tls.key"
	CACertKey = "ca.crt"
	CAKeyKey  = "ca.key"
)

// Policy is how long certificates live and when they are renewed.
type Policy struct {
	// Validity is the lifetime of a new CA and of a new serving
	// certificate (which never outlives its CA).
	Validity time.Duration
	// RenewBefore is how long before its expiry a certificate is renewed.
	RenewBefore time.Duration
	// Overlap is how long a new CA is trusted before a certificate it
	// signed is served: long enough for every reader of the Secret's files
	// (kubelet updates them within about a minute) and of the caBundles.
	Overlap time.Duration
	// DNSNames are the names of the serving certificate.
	DNSNames []string
}

// Validate checks that a renewed certificate is not due again at once.
func (p Policy) Validate() error {
	if p.Validity <= p.RenewBefore {
		return fmt.Errorf("the validity (%s) must be longer than the renewal window (%s)", p.Validity, p.RenewBefore)
	}
	if p.RenewBefore <= p.Overlap {
		return fmt.Errorf("the renewal window (%s) must be longer than the overlap of the old and new CAs (%s)", p.RenewBefore, p.Overlap)
	}
	return nil
}

// pair is the Secret's content, parsed.
type pair struct {
	// cas is the trusted bundle, signer first when there is one.
	cas []*x509.Certificate
	// signer is the key of cas[0]; nil when the Secret has none (the
	// chart's Secret before the leader first renewed it) or it does not
	// match.
	signer crypto.Signer
	leaf   *x509.Certificate
}

// parse reads the Secret's data; a missing or unreadable serving
// certificate is a nil leaf, renewed at once.
func parse(data map[string][]byte) (*pair, error) {
	cas, err := certutil.ParseCertsPEM(data[CACertKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CACertKey, err)
	}
	p := &pair{cas: cas}
	if key, err := keyutil.ParsePrivateKeyPEM(data[CAKeyKey]); err == nil {
		if signer, ok := key.(crypto.Signer); ok && samePublicKey(signer.Public(), cas[0].PublicKey) {
			p.signer = signer
		}
	}
	if leaves, err := certutil.ParseCertsPEM(data[CertKey]); err == nil {
		p.leaf = leaves[0]
	}
	return p, nil
}

// samePublicKey is true when a and b are one key.
func samePublicKey(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}

// signedBySigner is true when the serving certificate was signed by the
// CA whose key the Secret holds.
func (p *pair) signedBySigner() bool {
	return p.signer != nil && p.leaf != nil && p.leaf.CheckSignatureFrom(p.cas[0]) == nil
}

// Renewal is what Renew decided.
type Renewal struct {
	// Data is the Secret's new data; nil when nothing changes.
	Data map[string][]byte
	// Why says what changed, for the log and the event.
	Why string
	// Next is when Renew has more to do: the end of a new CA's overlap,
	// or when a certificate enters its renewal window.
	Next time.Time
}

// Renew decides, at now, what the Secret's data must become. A CA that
// enters its renewal window (or a Secret without the key of its CA) gets
// a successor, put first in the bundle beside the CAs that have not
// expired; the serving certificate is renewed when it enters its window,
// or when another CA than the signer signed it, once the signer has been
// trusted for the overlap. Expired CAs leave the bundle.
func Renew(now time.Time, data map[string][]byte, policy Policy) (*Renewal, error) {
	p, err := parse(data)
	if err != nil {
		return nil, err
	}
	due := func(c *x509.Certificate) time.Time { return c.NotAfter.Add(-policy.RenewBefore) }
	if p.signer == nil || !now.Before(due(p.cas[0])) {
		ca, key, err := newCA(now, policy.Validity)
		if err != nil {
			return nil, err
		}
		why := "a new CA beside the one expiring at " + p.cas[0].NotAfter.UTC().Format(time.RFC3339)
		if p.signer == nil {
			why = "a new CA: the Secret holds no key of its CA"
		}
		p.cas, p.signer = append([]*x509.Certificate{ca}, unexpired(now, p.cas)...), key
		out, err := p.encode(data)
		return &Renewal{Data: out, Why: why, Next: now.Add(policy.Overlap)}, err
	}
	trustedSince := p.cas[0].NotBefore.Add(policy.Overlap)
	if !p.signedBySigner() || !now.Before(due(p.leaf)) {
		if now.Before(trustedSince) {
			return &Renewal{Next: trustedSince}, nil
		}
		leaf, key, err := p.issue(now, policy)
		if err != nil {
			return nil, err
		}
		p.leaf, p.cas = leaf, unexpired(now, p.cas)
		out, err := p.encode(data)
		if err != nil {
			return nil, err
		}
		out[KeyKey] = key
		return &Renewal{Data: out, Why: "a new serving certificate, expiring at " + leaf.NotAfter.UTC().Format(time.RFC3339),
			Next: earliest(due(leaf), due(p.cas[0]))}, nil
	}
	next := earliest(due(p.leaf), due(p.cas[0]))
	if kept := unexpired(now, p.cas); len(kept) < len(p.cas) {
		p.cas = kept
		out, err := p.encode(data)
		return &Renewal{Data: out, Why: "expired CAs left the bundle", Next: next}, err
	}
	for _, ca := range p.cas[1:] {
		next = earliest(next, ca.NotAfter)
	}
	return &Renewal{Next: next}, nil
}

// unexpired are the CAs of cas still valid at now, the first always kept.
func unexpired(now time.Time, cas []*x509.Certificate) []*x509.Certificate {
	kept := cas[:1:1]
	for _, ca := range cas[1:] {
		if now.Before(ca.NotAfter) {
			kept = append(kept, ca)
		}
	}
	return kept
}

// earliest is the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// encode is data with p's bundle, CA key and serving certificate.
func (p *pair) encode(data map[string][]byte) (map[string][]byte, error) {
	out := make(map[string][]byte, len(data)+1)
	for k, v := range data {
		out[k] = v
	}
	var err error
	if out[CACertKey], err = certutil.EncodeCertificates(p.cas...); err != nil {
		return nil, err
	}
	if out[CAKeyKey], err = keyutil.MarshalPrivateKeyToPEM(p.signer); err != nil {
		return nil, err
	}
	if p.leaf != nil {
		if out[CertKey], err = certutil.EncodeCertificates(p.leaf); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// newCA makes a CA valid from now for validity.
func newCA(now time.Time, validity time.Duration) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("evictionrequest-apiserver-ca@%d", now.Unix())},
		NotBefore:             now,
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	cert, err := sign(template, template, key.Public(), key)
	return cert, key, err
}

// issue signs a serving certificate valid from now for the policy's
// validity, or until its CA expires if sooner, and returns it and its key
// (PEM).
func (p *pair) issue(now time.Time, policy Policy) (*x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if len(policy.DNSNames) == 0 {
		return nil, nil, errors.New("a serving certificate needs DNS names")
	}
	template := &x509.Certificate{
		Subject:     pkix.Name{CommonName: policy.DNSNames[0]},
		DNSNames:    policy.DNSNames,
		NotBefore:   now,
		NotAfter:    earliest(now.Add(policy.Validity), p.cas[0].NotAfter),
		KeyUsage:    x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	cert, err := sign(template, p.cas[0], key.Public(), p.signer)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	return cert, keyPEM, err
}

// sign signs template with parent's key signer.
func sign(template, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	template.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, template, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}
