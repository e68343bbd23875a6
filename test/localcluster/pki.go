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

package localcluster

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
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

const certValidity = 365 * 24 * time.Hour

// authority is a certificate authority the harness generates and signs
// certificates with; nothing of it outlives the cluster directory.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
	// certFile is the PEM file of the CA certificate.
	certFile string
}

// keyPair is a signed certificate and its key, written as PEM files.
type keyPair struct {
	CertFile, KeyFile string
	CertPEM, KeyPEM   []byte
}

// newAuthority creates a CA named cn and writes its certificate to dir.
func newAuthority(dir, cn string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: cn}, key)
	if err != nil {
		return nil, err
	}
	ca := &authority{cert: cert, key: key, certFile: filepath.Join(dir, cn+"-ca.crt")}
	return ca, os.WriteFile(ca.certFile, ca.certPEM(), 0o600)
}

func (ca *authority) certPEM() []byte {
	pem, _ := certutil.EncodeCertificates(ca.cert)
	return pem
}

// certRequest describes a leaf certificate.
type certRequest struct {
	name         string
	commonName   string
	organization []string
	dnsNames     []string
	ips          []net.IP
	usage        x509.ExtKeyUsage
}

// sign issues the certificate of req and writes it and its key to dir as
// <name>.crt and <name>.key.
func (ca *authority) sign(dir string, req certRequest) (*keyPair, error) {
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
		Subject:      pkix.Name{CommonName: req.commonName, Organization: req.organization},
		DNSNames:     req.dnsNames,
		IPAddresses:  req.ips,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{req.usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", req.name, err)
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
	pair := &keyPair{
		CertFile: filepath.Join(dir, req.name+".crt"), KeyFile: filepath.Join(dir, req.name+".key"),
		CertPEM: certPEM, KeyPEM: keyPEM,
	}
	if err := os.WriteFile(pair.CertFile, certPEM, 0o600); err != nil {
		return nil, err
	}
	return pair, os.WriteFile(pair.KeyFile, keyPEM, 0o600)
}

// pki holds every certificate and key of the local control plane.
type pki struct {
	// clusterCA signs kube-apiserver's serving certificate and every client
	// certificate kube-apiserver accepts.
	clusterCA *authority
	// frontProxyCA signs the client certificate the aggregator presents to
	// our server; our server trusts it through the request header settings.
	frontProxyCA *authority
	// servingCA signs our server's certificate; it is the APIService caBundle.
	servingCA *authority

	apiserverServing  *keyPair
	frontProxyClient  *keyPair
	evictionServing   *keyPair
	admin             *keyPair
	controllerManager *keyPair
	scheduler         *keyPair
	kwok              *keyPair
	evictionServer    *keyPair
	surgeInterceptor  *keyPair

	// serviceAccountKeyFile signs and verifies service account tokens.
	serviceAccountKeyFile string
}

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var p pki
	var err error
	if p.clusterCA, err = newAuthority(dir, "cluster"); err != nil {
		return nil, err
	}
	if p.frontProxyCA, err = newAuthority(dir, "front-proxy"); err != nil {
		return nil, err
	}
	if p.servingCA, err = newAuthority(dir, "evictionrequest-serving"); err != nil {
		return nil, err
	}
	loopbackIP := []net.IP{net.ParseIP("127.0.0.1")}
	issue := []struct {
		ca   *authority
		into **keyPair
		req  certRequest
	}{
		{p.clusterCA, &p.apiserverServing, certRequest{name: "kube-apiserver", commonName: "kube-apiserver",
			dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, ips: loopbackIP, usage: x509.ExtKeyUsageServerAuth}},
		{p.clusterCA, &p.admin, certRequest{name: "admin", commonName: "kubernetes-admin", organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.controllerManager, certRequest{name: "kube-controller-manager", commonName: "system:kube-controller-manager",
			organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.scheduler, certRequest{name: "kube-scheduler", commonName: "system:kube-scheduler", usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.kwok, certRequest{name: "kwok", commonName: "kwok", organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth}},
		// Our server authenticates as its service account, so the RBAC of
		// artifacts/deploy is what authorizes it, as in a real cluster.
		{p.clusterCA, &p.evictionServer, certRequest{name: "evictionrequest-apiserver-client",
			commonName:   "system:serviceaccount:" + serverNamespace + ":" + serverName,
			organization: []string{"system:serviceaccounts", "system:serviceaccounts:" + serverNamespace}, usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.surgeInterceptor, certRequest{name: "surge-interceptor-client",
			commonName:   "system:serviceaccount:" + serverNamespace + ":" + surgeInterceptorName,
			organization: []string{"system:serviceaccounts", "system:serviceaccounts:" + serverNamespace}, usage: x509.ExtKeyUsageClientAuth}},
		{p.frontProxyCA, &p.frontProxyClient, certRequest{name: "front-proxy-client", commonName: frontProxyClientName, usage: x509.ExtKeyUsageClientAuth}},
		{p.servingCA, &p.evictionServing, certRequest{name: "evictionrequest-apiserver", commonName: serverName,
			dnsNames: []string{serverName + "." + serverNamespace + ".svc", "localhost"}, ips: loopbackIP, usage: x509.ExtKeyUsageServerAuth}},
	}
	for _, i := range issue {
		if *i.into, err = i.ca.sign(dir, i.req); err != nil {
			return nil, err
		}
	}

	saKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, err
	}
	p.serviceAccountKeyFile = filepath.Join(dir, "service-account.key")
	return &p, os.WriteFile(p.serviceAccountKeyFile, saKey, 0o600)
}
