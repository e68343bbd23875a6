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
	"slices"
	"testing"
)

func TestComponentsRunWithTheGoRuntimesDefaults(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "GOGC=400", "HOME=/root", "GOMEMLIMIT=3GiB", "GOGCX=1"}
	got := componentEnviron(environ, []string{"KUBECONFIG=/k"})
	want := []string{"PATH=/usr/bin", "HOME=/root", "GOGCX=1", "KUBECONFIG=/k"}
	if !slices.Equal(got, want) {
		t.Errorf("componentEnviron(%q) = %q, want %q", environ, got, want)
	}
}

func TestAComponentMaySetTheGoRuntimesSettingsItself(t *testing.T) {
	got := componentEnviron([]string{"GOGC=400"}, []string{"GOGC=50"})
	if want := []string{"GOGC=50"}; !slices.Equal(got, want) {
		t.Errorf("componentEnviron = %q, want %q", got, want)
	}
}
