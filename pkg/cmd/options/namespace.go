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

package options

import (
	"os"
	"strings"
)

// DefaultNamespace is the namespace the manifests of artifacts/ install
// into unless told otherwise.
const DefaultNamespace = "evictionrequest-system"

// serviceAccountNamespaceFile is where the kubelet writes the namespace of
// a pod's service account.
var serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// InstallNamespace is the namespace the process runs in: $POD_NAMESPACE,
// else that of its service account in a pod (as client-go's in-cluster
// configuration reads it), else DefaultNamespace. What lives beside the
// process, its Leases and the name of its Service, defaults to it, so that
// an install in another namespace needs no flag.
func InstallNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if data, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns
		}
	}
	return DefaultNamespace
}
