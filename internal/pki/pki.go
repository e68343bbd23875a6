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

// Package pki issues the certificates of a small private PKI: a CA and the
// leaf certificates it signs, as PEM. `make certs` writes the serving
// certificate of the deploy overlays with it, and the local control plane
// its whole PKI.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Authority is a certificate authority.
type Authority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// NewAuthority creates a self-signed CA named commonName.
func NewAuthority(commonName string) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: commonName}, key)
	if err != nil {
		return nil, err
	}
	return &Authority{cert: cert, key: key}, nil
}

// CertPEM is the CA certificate as PEM.
func (ca *Authority) CertPEM() []byte {
	data, _ := certutil.EncodeCertificates(ca.cert)
	return data
}

// Request describes a leaf certificate.
type Request struct {
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	Usage        x509.ExtKeyUsage
	// MoreUsages are further extended key usages, such as client auth for
	// an etcd member's certificate, which its peers also verify as clients.
	MoreUsages []x509.ExtKeyUsage
	Validity   time.Duration
}

// KeyPair is a signed certificate and its private key, as PEM.
type KeyPair struct {
	CertPEM, KeyPEM []byte
}

// Sign issues the certificate req describes.
func (ca *Authority) Sign(req Request) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: req.CommonName, Organization: req.Organization},
		DNSNames:     req.DNSNames,
		IPAddresses:  req.IPs,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(req.Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  append([]x509.ExtKeyUsage{req.Usage}, req.MoreUsages...),
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("signing the certificate of %s: %w", req.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		return nil, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, err
	}
	return &KeyPair{CertPEM: certPEM, KeyPEM: keyPEM}, nil
}
