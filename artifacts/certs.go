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
	// EtcdCertDir holds, for the overlays with an etcd StatefulSet (ha,
	// ha-bridge), etcd's CA (ca.crt), the certificate its members serve
	// clients and peers with (member.crt, member.key), and the server's
	// client certificate (client.crt, client.key).
	EtcdCertDir = "components/etcd-cert-files/certs"
	// BridgeClientCertDir holds the CA of the client certificate
	// kube-apiserver presents to the eviction API bridge (ca.crt), read by
	// the eviction-bridge-authentication component; beside it, for the
	// admin to copy to the control plane, kube-apiserver's certificate and
	// key and the admission configuration that presents them
	// (BridgeClientFiles).
	BridgeClientCertDir = "components/eviction-bridge-authentication/certs"
)

// BridgeClientName is the common name of the client certificate `make
// certs` issues kube-apiserver for the eviction API bridge, which the
// eviction-bridge-authentication component allows.
const BridgeClientName = "kube-apiserver-eviction-bridge-client"

// CertFiles are the paths, relative to artifacts/, of every certificate
// file the overlays read.
var CertFiles = []string{
	ServingCertDir + "/tls.crt", ServingCertDir + "/tls.key", ServingCertDir + "/ca.crt",
	EtcdCertDir + "/ca.crt", EtcdCertDir + "/member.crt", EtcdCertDir + "/member.key",
	EtcdCertDir + "/client.crt", EtcdCertDir + "/client.key",
	BridgeClientCertDir + "/ca.crt",
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

// BridgeClientFiles are the files, besides ca.crt, that IssueBridgeClientCertFiles
// writes for kube-apiserver, in BridgeClientCertDir: its client certificate
// and key, the kubeconfig that presents them to the bridge's Services, and
// the admission configuration that names that kubeconfig. They name
// BridgeClientControlPlaneDir, where the admin copies them.
var BridgeClientFiles = []string{"kube-apiserver-client.crt", "kube-apiserver-client.key", "eviction-bridge-kubeconfig.yaml", "admission-configuration.yaml"}

// BridgeClientControlPlaneDir is where the files for kube-apiserver are
// copied on each control plane node, as the admission configuration names
// them.
const BridgeClientControlPlaneDir = "/etc/kubernetes/eviction-bridge"

// IssueBridgeClientCertFiles issues a fresh CA and, with it, the client
// certificate kube-apiserver presents to the eviction API bridge of the
// Services in namespace, for BridgeClientCertDir, keyed by path relative to
// artifacts/: the CA the component reads and BridgeClientFiles.
func IssueBridgeClientCertFiles(namespace string, validity time.Duration) (map[string][]byte, error) {
	ca, err := pki.NewAuthority("evictionrequest-eviction-bridge-client-ca")
	if err != nil {
		return nil, err
	}
	client, err := ca.Sign(pki.Request{CommonName: BridgeClientName, Usage: x509.ExtKeyUsageClientAuth, Validity: validity})
	if err != nil {
		return nil, err
	}
	dir := BridgeClientControlPlaneDir
	return map[string][]byte{
		path.Join(BridgeClientCertDir, "ca.crt"):                          ca.CertPEM(),
		path.Join(BridgeClientCertDir, "kube-apiserver-client.crt"):       client.CertPEM,
		path.Join(BridgeClientCertDir, "kube-apiserver-client.key"):       client.KeyPEM,
		path.Join(BridgeClientCertDir, "eviction-bridge-kubeconfig.yaml"): []byte(BridgeClientKubeconfig(namespace, dir+"/kube-apiserver-client.crt", dir+"/kube-apiserver-client.key")),
		path.Join(BridgeClientCertDir, "admission-configuration.yaml"):    []byte(AdmissionConfiguration(dir + "/eviction-bridge-kubeconfig.yaml")),
	}, nil
}

// BridgeClientKubeconfig is the kubeconfig with which kube-apiserver's
// ValidatingAdmissionWebhook plugin presents certFile and keyFile to the
// bridge's webhooks in namespace: kube-apiserver picks the user named after
// the webhook's Service (<service>.<namespace>.svc, port 443), here every
// Service of namespace, and calls every other webhook as before. An empty
// namespace names "*": every webhook (the local control plane's, whose
// Services are on ports it cannot know in advance).
func BridgeClientKubeconfig(namespace, certFile, keyFile string) string {
	user := "'*'"
	if namespace != "" {
		user = "'*." + namespace + ".svc'"
	}
	return `# kube-apiserver presents this certificate to the eviction API bridge
# (the ValidatingAdmissionWebhook plugin's kubeConfigFile).
apiVersion: v1
kind: Config
users:
- name: ` + user + `
  user:
    client-certificate: ` + certFile + `
    client-key: ` + keyFile + `
`
}

// AdmissionConfiguration is kube-apiserver's admission configuration
// (--admission-control-config-file) whose ValidatingAdmissionWebhook plugin
// authenticates to webhooks with kubeconfig. Merge its plugin into an
// admission configuration kube-apiserver already has.
func AdmissionConfiguration(kubeconfig string) string {
	return `# kube-apiserver --admission-control-config-file: the
# ValidatingAdmissionWebhook plugin authenticates to the eviction API
# bridge with the client certificate of its kubeConfigFile.
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: ` + kubeconfig + `
`
}
