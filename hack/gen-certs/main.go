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

// Command gen-certs writes the certificate files the overlays of
// artifacts/ read, each set issued by a fresh CA: the server's serving
// certificate and the CA the APIService trusts (serving-cert-files), and
// the ha overlay's etcd CA, member and client certificates, and the CA of
// kube-apiserver's client certificate for the eviction API bridge with that
// certificate and kube-apiserver's admission configuration
// (eviction-bridge-authentication). `make certs` runs it.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/evictionrequest/apiserver/artifacts"
)

func main() {
	root := flag.String("artifacts", "artifacts", "The artifacts/ directory to write the files under.")
	namespace := flag.String("namespace", artifacts.Namespace, "Namespace the overlays are installed in: the certificates name the Services in it.")
	sets := flag.String("sets", "serving,etcd,bridge-client", "Which certificates to write, each set with a fresh CA: serving (the server's, default and ha), etcd (the ha overlay's etcd), "+
		"bridge-client (kube-apiserver's client certificate for the eviction API bridge, with its admission configuration: eviction-bridge-authentication).")
	validity := flag.Duration("validity", 365*24*time.Hour, "How long the certificates are valid.")
	flag.Parse()
	if err := run(*root, *namespace, strings.Split(*sets, ","), *validity); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(root, namespace string, sets []string, validity time.Duration) error {
	issuers := map[string]func(string, time.Duration) (map[string][]byte, error){
		"serving":       artifacts.IssueServingCertFiles,
		"etcd":          artifacts.IssueEtcdCertFiles,
		"bridge-client": artifacts.IssueBridgeClientCertFiles,
	}
	files := map[string][]byte{}
	for _, set := range sets {
		issue, ok := issuers[set]
		if !ok {
			return fmt.Errorf("--sets: unknown set %q, want serving, etcd or bridge-client", set)
		}
		issued, err := issue(namespace, validity)
		if err != nil {
			return err
		}
		maps.Copy(files, issued)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		file := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(file, files[name], 0o600); err != nil {
			return err
		}
		fmt.Println("Wrote", file)
	}
	return nil
}
