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

// Command gen-serving-cert writes a fresh CA and the serving certificate of
// evictionrequest-apiserver, issued by that CA for its Service, as the files
// the serving-cert-files component of artifacts/ reads: tls.crt, tls.key and
// ca.crt. `make certs` runs it.
package main

import (
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/evictionrequest/apiserver/pkg/util/pki"
)

func main() {
	out := flag.String("out", "artifacts/components/serving-cert-files/certs", "Directory to write tls.crt, tls.key and ca.crt to.")
	namespace := flag.String("namespace", "evictionrequest-system", "Namespace of the server's Service.")
	service := flag.String("service", "evictionrequest-apiserver", "Name of the server's Service.")
	validity := flag.Duration("validity", 365*24*time.Hour, "How long the serving certificate is valid.")
	flag.Parse()
	if err := run(*out, *namespace, *service, *validity); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(out, namespace, service string, validity time.Duration) error {
	ca, err := pki.NewAuthority("evictionrequest-apiserver-ca")
	if err != nil {
		return err
	}
	host := service + "." + namespace + ".svc"
	pair, err := ca.Sign(pki.Request{
		CommonName: host,
		DNSNames:   []string{host, host + ".cluster.local"},
		Usage:      x509.ExtKeyUsageServerAuth,
		Validity:   validity,
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "ca.crt": ca.CertPEM()} {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o600); err != nil {
			return err
		}
	}
	fmt.Printf("Wrote a CA and the serving certificate of %s to %s\n", host, out)
	return nil
}
