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

package artifacts

import (
	"crypto/x509"
	"net"
	"path"
	"time"

	"github.com/evictionrequest/apiserver/internal/pki"
)

// The directories, relative to artifacts/, of the certificates the
// overlays read from files, which are never embedded nor committed: `make
// certs` writes them.
const (
	// ServingCertDir holds the server's serving certificate (tls.crt,
	// tls.key) and the CA the APIService trusts (ca.crt), read by the
	// serving-cert-files component.
	ServingCertDir = "components/serving-cert-files/certs"
	// EtcdCertDir holds the ha overlay's etcd CA (ca.crt), the certificate
	// its members serve clients and peers with (member.crt, member.key),
	// and the server's client certificate (client.crt, client.key).
	EtcdCertDir = "overlays/ha/certs"
)

// CertFiles are the paths, relative to artifacts/, of every certificate
// file the overlays read.
var CertFiles = []string{
	ServingCertDir + "/tls.crt", ServingCertDir + "/tls.key", ServingCertDir + "/ca.crt",
	EtcdCertDir + "/ca.crt", EtcdCertDir + "/member.crt", EtcdCertDir + "/member.key",
	EtcdCertDir + "/client.crt", EtcdCertDir + "/client.key",
}

// Namespace is the namespace the overlays install into unless a
// kustomization of the user's sets another (artifacts/examples/namespace).
const Namespace = "evictionrequest-system"

// IssueServingCertFiles issues a fresh CA and the serving certificate of
// the server's Service in namespace, for ServingCertDir, keyed by path
// relative to artifacts/.
func IssueServingCertFiles(namespace string, validity time.Duration) (map[string][]byte, error) {
	ca, err := pki.NewAuthority("evictionrequest-apiserver-ca")
	if err != nil {
		return nil, err
	}
	host := "evictionrequest-apiserver." + namespace + ".svc"
	pair, err := ca.Sign(pki.Request{CommonName: host, DNSNames: []string{host, host + ".cluster.local"},
		Usage: x509.ExtKeyUsageServerAuth, Validity: validity})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		path.Join(ServingCertDir, "tls.crt"): pair.CertPEM,
		path.Join(ServingCertDir, "tls.key"): pair.KeyPEM,
		path.Join(ServingCertDir, "ca.crt"):  ca.CertPEM(),
	}, nil
}

// IssueEtcdCertFiles issues a fresh CA of the ha overlay's etcd, apart
// from the serving CA so that no other certificate reaches etcd, and with
// it the members' certificate and the server's client certificate, for
// EtcdCertDir, keyed by path relative to artifacts/. The members'
// certificate names every member of the StatefulSet in namespace: by the
// name within the namespace the overlay dials, and by the full names etcd
// matches a peer's reverse DNS against (wildcards of the headless Service);
// and localhost, for etcdctl through a port-forward.
func IssueEtcdCertFiles(namespace string, validity time.Duration) (map[string][]byte, error) {
	ca, err := pki.NewAuthority("evictionrequest-etcd-ca")
	if err != nil {
		return nil, err
	}
	service := "evictionrequest-etcd." + namespace + ".svc"
	member, err := ca.Sign(pki.Request{
		CommonName: "evictionrequest-etcd",
		DNSNames:   []string{"*.evictionrequest-etcd", "*." + service, "*." + service + ".cluster.local", service, "localhost"},
		IPs:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		Usage:      x509.ExtKeyUsageServerAuth, MoreUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		Validity: validity,
	})
	if err != nil {
		return nil, err
	}
	client, err := ca.Sign(pki.Request{CommonName: "evictionrequest-apiserver", Usage: x509.ExtKeyUsageClientAuth, Validity: validity})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		path.Join(EtcdCertDir, "ca.crt"):     ca.CertPEM(),
		path.Join(EtcdCertDir, "member.crt"): member.CertPEM,
		path.Join(EtcdCertDir, "member.key"): member.KeyPEM,
		path.Join(EtcdCertDir, "client.crt"): client.CertPEM,
		path.Join(EtcdCertDir, "client.key"): client.KeyPEM,
	}, nil
}
