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
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The bridge serves kube-apiserver only unless an admin says otherwise by
// name: without --eviction-bridge-client-ca-file it does not start, and
// the error names both ways out.
func TestBridgeOptionsRequireCallerAuthentication(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{args: []string{"--eviction-bridge-client-ca-file=ca.crt"}},
		{args: []string{"--eviction-bridge-client-ca-file=ca.crt", "--eviction-bridge-allowed-names=kube-apiserver"}},
		{args: []string{"--eviction-bridge-allow-unauthenticated-callers"}},
		{args: nil, want: []string{"--eviction-bridge-client-ca-file", "--eviction-bridge-allow-unauthenticated-callers"}},
		{args: []string{"--eviction-bridge-allow-unauthenticated-callers=false"}, want: []string{"--eviction-bridge-client-ca-file", "--eviction-bridge-allow-unauthenticated-callers"}},
		{args: []string{"--eviction-bridge-client-ca-file=ca.crt", "--eviction-bridge-allow-unauthenticated-callers"}, want: []string{"contradicts"}},
	} {
		o := NewBridgeOptions()
		o.Enabled = true
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		errs := o.Validate()
		if len(tc.want) == 0 {
			if len(errs) != 0 {
				t.Errorf("%v: errors %v, want none", tc.args, errs)
			}
			continue
		}
		if len(errs) != 1 {
			t.Errorf("%v: errors %v, want one", tc.args, errs)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(errs[0].Error(), want) {
				t.Errorf("%v: error %q does not name %s", tc.args, errs[0], want)
			}
		}
	}
}

// The bridge off needs nothing.
func TestBridgeOptionsOffNeedNoCallerAuthentication(t *testing.T) {
	if errs := NewBridgeOptions().Validate(); len(errs) != 0 {
		t.Errorf("errors %v, want none", errs)
	}
}
