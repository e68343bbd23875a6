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

package chart

import (
	"strings"
	"testing"
)

// The schema refuses, at install, a values file with a key the chart does
// not have, or a value of the wrong kind, naming it; the templates refuse
// an APIService without a CA to trust.
func TestTheChartRefusesWhatIsNotAValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a mistyped key", []string{"--set=apiserver.replica=2"}, []string{"additional properties 'replica' not allowed"}},
		{"a mistyped top-level key", []string{"--set=imag.tag=v1"}, []string{"additional properties 'imag' not allowed"}},
		{"a wrong type", []string{"--set-string=apiserver.replicas=two"}, []string{"apiserver", "replicas"}},
		{"an unknown mode", []string{"--set=apiserver.etcd.mode=sqlite"}, []string{"apiserver", "mode"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmTemplate(t, append([]string{"--values=" + ciValues("default")}, tc.args...)...)
			if err == nil {
				t.Fatal("helm template accepted it")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q:\n%v", want, err)
				}
			}
		})
	}
}
