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

// Command render prints an overlay of artifacts/ as YAML, with the
// components named after it added last, as `kubectl kustomize` does, with
// placeholder certificate files for the overlays that read them: for
// linters of the manifests (hack/verify-kube-score.sh), not for installing.
package main

import (
	"fmt"
	"os"

	"github.com/evictionrequest/apiserver/artifacts"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: render OVERLAY [COMPONENT...]")
		os.Exit(2)
	}
	placeholders := map[string][]byte{}
	for _, name := range artifacts.CertFiles {
		placeholders[name] = []byte("placeholder " + name)
	}
	objects, err := artifacts.RenderWith(os.Args[1], artifacts.Install{Components: os.Args[2:]}, placeholders)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	doc, err := artifacts.Encode(objects)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(doc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
