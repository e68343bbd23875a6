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
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

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

// memberTLS is how the members of an etcd cluster serve over TLS: their
// TLS flags, and the configuration of their clients.
type memberTLS struct {
	args   []string
	client *tls.Config
}

// memberTLSFlags are the TLS flags of etcd the overlay's StatefulSet may
// set, with the file of the member's Secret each reads.
var memberTLSFlags = map[string]bool{
	"cert-file": true, "key-file": true, "trusted-ca-file": true, "client-cert-auth": true,
	"peer-cert-file": true, "peer-key-file": true, "peer-trusted-ca-file": true, "peer-client-cert-auth": true,
}

// membersOf returns the TLS of the members as the etcd container of set
// runs them, its Secret's files (tls.crt, tls.key, ca.crt) mapped to the
// local ones, or nil when set serves clients in plain HTTP: a flag taken
// out of the overlay's StatefulSet is taken out of the local members, and
// the e2e suite sees it.
func (t *etcdTLS) membersOf(set *appsv1.StatefulSet) (*memberTLS, error) {
	files := map[string]string{"tls.crt": t.memberCert, "tls.key": t.memberKey, "ca.crt": t.caFile}
	args := set.Spec.Template.Spec.Containers[0].Args
	secure := slices.ContainsFunc(args, func(arg string) bool { return strings.HasPrefix(arg, "--listen-client-urls=https://") })
	if !secure {
		return nil, nil
	}
	m := &memberTLS{client: t.client}
	for _, arg := range args {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !memberTLSFlags[name] {
			continue
		}
		if hasValue {
			local, ok := files[path.Base(value)]
			if !ok {
				return nil, fmt.Errorf("StatefulSet %s: --%s reads %s, which is not a file of the member's Secret", set.Name, name, value)
			}
			arg = "--" + name + "=" + local
		}
		m.args = append(m.args, arg)
	}
	return m, nil
}

// serverArgs replace the server's etcd TLS flags of the overlay with the
// local files.
func (t *etcdTLS) serverArgs() map[string]string {
	return map[string]string{"etcd-cafile": t.caFile, "etcd-certfile": t.clientCert, "etcd-keyfile": t.clientKey}
}
