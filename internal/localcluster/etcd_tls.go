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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/evictionrequest/apiserver/artifacts"
)

// etcdTLS holds the certificates of the etcd cluster the server stores in
// when the overlay runs one: the files the ha overlay's Secrets hold, issued
// as `make certs` issues them, and written where the local members and
// servers read them.
type etcdTLS struct {
	// files are the certificate files keyed as artifacts.CertFiles.
	files map[string][]byte
	// caFile, memberCert, memberKey, clientCert and clientKey are the
	// written files.
	caFile, memberCert, memberKey, clientCert, clientKey string
	// client is the TLS configuration of a client of the members.
	client *tls.Config
}

func newEtcdTLS(dir string) (*etcdTLS, error) {
	files, err := artifacts.IssueEtcdCertFiles(serverNamespace, certValidity)
	if err != nil {
		return nil, err
	}
	written := map[string]string{}
	for _, name := range []string{"ca.crt", "member.crt", "member.key", "client.crt", "client.key"} {
		written[name] = filepath.Join(dir, "etcd-"+name)
		if err := os.WriteFile(written[name], files[path.Join(artifacts.EtcdCertDir, name)], 0o600); err != nil {
			return nil, err
		}
	}
	pair, err := tls.LoadX509KeyPair(written["client.crt"], written["client.key"])
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(files[path.Join(artifacts.EtcdCertDir, "ca.crt")]) {
		return nil, fmt.Errorf("no certificate in etcd's CA")
	}
	return &etcdTLS{
		files:  files,
		caFile: written["ca.crt"], memberCert: written["member.crt"], memberKey: written["member.key"],
		clientCert: written["client.crt"], clientKey: written["client.key"],
		client: &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots, MinVersion: tls.VersionTLS12},
	}, nil
}

// memberArgs are the flags of a member that serves clients and peers over
// TLS and verifies their certificates, as the ha overlay's StatefulSet
// runs them.
func (t *etcdTLS) memberArgs() []string {
	return []string{
		"--cert-file=" + t.memberCert, "--key-file=" + t.memberKey, "--trusted-ca-file=" + t.caFile, "--client-cert-auth",
		"--peer-cert-file=" + t.memberCert, "--peer-key-file=" + t.memberKey, "--peer-trusted-ca-file=" + t.caFile, "--peer-client-cert-auth",
	}
}

// serverArgs replace the server's etcd TLS flags of the overlay with the
// local files.
func (t *etcdTLS) serverArgs() map[string]string {
	return map[string]string{"etcd-cafile": t.caFile, "etcd-certfile": t.clientCert, "etcd-keyfile": t.clientKey}
}
