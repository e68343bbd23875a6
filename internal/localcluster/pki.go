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
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/keyutil"

	"github.com/evictionrequest/apiserver/artifacts"
	pkiutil "github.com/evictionrequest/apiserver/internal/pki"
)

const certValidity = 365 * 24 * time.Hour

// AdminUser is the user name of the admin kubeconfig's client certificate,
// a member of system:masters, as kubeadm names it.
const AdminUser = "kubernetes-admin"

// authority is a certificate authority the harness generates and signs
// certificates with; nothing of it outlives the cluster directory.
type authority struct {
	*pkiutil.Authority
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
	ca, err := pkiutil.NewAuthority(cn)
	if err != nil {
		return nil, err
	}
	a := &authority{Authority: ca, certFile: filepath.Join(dir, cn+"-ca.crt")}
	return a, os.WriteFile(a.certFile, a.certPEM(), 0o600)
}

func (ca *authority) certPEM() []byte {
	return ca.CertPEM()
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
	signed, err := ca.Sign(pkiutil.Request{CommonName: req.commonName, Organization: req.organization,
		DNSNames: req.dnsNames, IPs: req.ips, Usage: req.usage, Validity: certValidity})
	if err != nil {
		return nil, err
	}
	pair := &keyPair{
		CertFile: filepath.Join(dir, req.name+".crt"), KeyFile: filepath.Join(dir, req.name+".key"),
		CertPEM: signed.CertPEM, KeyPEM: signed.KeyPEM,
	}
	if err := os.WriteFile(pair.CertFile, pair.CertPEM, 0o600); err != nil {
		return nil, err
	}
	return pair, os.WriteFile(pair.KeyFile, pair.KeyPEM, 0o600)
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
	// bridgeClientCA signs the client certificate kube-apiserver presents
	// to the eviction API bridge (bridgeClient), as the
	// eviction-bridge-authentication component has it.
	bridgeClientCA *authority

	apiserverServing  *keyPair
	frontProxyClient  *keyPair
	bridgeClient      *keyPair
	evictionServing   *keyPair
	admin             *keyPair
	controllerManager *keyPair
	scheduler         *keyPair
	kwok              *keyPair
	karpenter         *keyPair
	evictionServer    *keyPair
	surgeInterceptor  *keyPair
	// lifecycleController is evictionrequest-controller's service account.
	lifecycleController *keyPair

	// serviceAccountKeyFile signs and verifies service account tokens.
	serviceAccountKeyFile string
	// etcd secures the etcd cluster of the server, when the overlay runs one.
	etcd *etcdTLS
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
	if p.bridgeClientCA, err = newAuthority(dir, "eviction-bridge-client"); err != nil {
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
		{p.clusterCA, &p.admin, certRequest{name: "admin", commonName: AdminUser, organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.controllerManager, certRequest{name: "kube-controller-manager", commonName: "system:kube-controller-manager",
			organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.scheduler, certRequest{name: "kube-scheduler", commonName: "system:kube-scheduler", usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.kwok, certRequest{name: "kwok", commonName: "kwok", organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.karpenter, certRequest{name: "karpenter", commonName: KarpenterUser, organization: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth}},
		// Our server authenticates as its service account, so the RBAC of
		// artifacts/ is what authorizes it, as in a real cluster.
		{p.clusterCA, &p.evictionServer, certRequest{name: "evictionrequest-apiserver-client",
			commonName:   "system:serviceaccount:" + serverNamespace + ":" + serverName,
			organization: []string{"system:serviceaccounts", "system:serviceaccounts:" + serverNamespace}, usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.surgeInterceptor, certRequest{name: "surge-interceptor-client",
			commonName:   "system:serviceaccount:" + serverNamespace + ":" + surgeInterceptorName,
			organization: []string{"system:serviceaccounts", "system:serviceaccounts:" + serverNamespace}, usage: x509.ExtKeyUsageClientAuth}},
		{p.clusterCA, &p.lifecycleController, certRequest{name: "evictionrequest-controller-client",
			commonName:   "system:serviceaccount:" + serverNamespace + ":" + lifecycleControllerName,
			organization: []string{"system:serviceaccounts", "system:serviceaccounts:" + serverNamespace}, usage: x509.ExtKeyUsageClientAuth}},
		{p.frontProxyCA, &p.frontProxyClient, certRequest{name: "front-proxy-client", commonName: frontProxyClientName, usage: x509.ExtKeyUsageClientAuth}},
		{p.bridgeClientCA, &p.bridgeClient, certRequest{name: "kube-apiserver-eviction-bridge-client", commonName: artifacts.BridgeClientName, usage: x509.ExtKeyUsageClientAuth}},
		// The serving certificate of our server, and of the eviction API
		// bridge wherever it runs: the names of the local Services that
		// stand in for theirs.
		{p.servingCA, &p.evictionServing, certRequest{name: "evictionrequest-apiserver", commonName: serverName,
			dnsNames: []string{serverName + "." + serverNamespace + ".svc", localServiceName + "." + serverNamespace + ".svc",
				lifecycleControllerName + "-local." + serverNamespace + ".svc", "localhost"}, ips: loopbackIP, usage: x509.ExtKeyUsageServerAuth}},
	}
	for _, i := range issue {
		if *i.into, err = i.ca.sign(dir, i.req); err != nil {
			return nil, err
		}
	}

	if p.etcd, err = newEtcdTLS(dir); err != nil {
		return nil, err
	}
	saKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, err
	}
	p.serviceAccountKeyFile = filepath.Join(dir, "service-account.key")
	return &p, os.WriteFile(p.serviceAccountKeyFile, saKey, 0o600)
}
