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
	"path/filepath"
	"testing"
)

func TestInstallNamespaceIsWhereTheProcessRuns(t *testing.T) {
	file := filepath.Join(t.TempDir(), "namespace")
	saved := serviceAccountNamespaceFile
	serviceAccountNamespaceFile = file
	t.Cleanup(func() { serviceAccountNamespaceFile = saved })
	t.Setenv("POD_NAMESPACE", "")

	if got := InstallNamespace(); got != DefaultNamespace {
		t.Errorf("outside a pod: %q, want %q", got, DefaultNamespace)
	}
	if err := os.WriteFile(file, []byte("team-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := InstallNamespace(); got != "team-a" {
		t.Errorf("in a pod of team-a: %q", got)
	}
	t.Setenv("POD_NAMESPACE", "team-b")
	if got := InstallNamespace(); got != "team-b" {
		t.Errorf("with POD_NAMESPACE=team-b: %q", got)
	}
	if got := NewLeaderElection("lease").ResourceNamespace; got != "team-b" {
		t.Errorf("the Lease's namespace is %q, want the install namespace", got)
	}
}
