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

package release

import (
	"fmt"
	"strings"
)

// krewPlatform is one archive of the plugin.
type krewPlatform struct {
	os, arch, uri, sha256 string
}

// krewManifest is the krew plugin manifest of a release, for
// `kubectl krew install --manifest=evictionrequest.yaml`.
func krewManifest(version string, platforms []krewPlatform) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: evictionrequest
spec:
  version: %s
  homepage: https://github.com/evictionrequest/apiserver
  shortDescription: Drain nodes and evict pods through EvictionRequests
  description: |
    Drains nodes and requests, withdraws and shows the eviction of pods
    through the EvictionRequest API of KEP-4563 (coordination.k8s.io with
    evictionrequest-apiserver, or Kubernetes' lifecycle.k8s.io), so that
    the pods' interceptors take part before they go. It refuses what
    kubectl drain refuses, and shows the live progress.
  platforms:
`, version)
	for _, p := range platforms {
		fmt.Fprintf(&b, `  - selector:
      matchLabels:
        os: %s
        arch: %s
    uri: %s
    sha256: %s
    bin: kubectl-evictionrequest
`, p.os, p.arch, p.uri, p.sha256)
	}
	return []byte(b.String())
}
