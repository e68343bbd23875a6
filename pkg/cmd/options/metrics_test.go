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

// The metrics server's flags are refused by name: an address that is not
// host:port with an IP, a certificate without its key.
func TestMetricsServingOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: nil},
		{args: []string{"--metrics-bind-address=0"}},
		{args: []string{"--metrics-bind-address=127.0.0.1:0"}},
		{args: []string{"--metrics-bind-address=[::1]:9090", "--metrics-tls-cert-file=tls.crt", "--metrics-tls-private-key-file=tls.key"}},
		{args: []string{"--metrics-bind-address=8080"}, want: "--metrics-bind-address"},
		{args: []string{"--metrics-bind-address=localhost:8080"}, want: "--metrics-bind-address \"localhost:8080\": the host must be an IP address"},
		{args: []string{"--metrics-bind-address=:http"}, want: "the port must be a number"},
		{args: []string{"--metrics-tls-cert-file=tls.crt"}, want: "--metrics-tls-cert-file and --metrics-tls-private-key-file go together"},
	} {
		o := NewMetricsServingOptions()
		fs, auth := pflag.NewFlagSet("metrics", pflag.ContinueOnError), pflag.NewFlagSet("auth", pflag.ContinueOnError)
		o.AddFlags(fs, auth)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		errs := o.Validate()
		var got []string
		for _, err := range errs {
			got = append(got, err.Error())
		}
		if tc.want == "" && len(errs) != 0 || tc.want != "" && (len(errs) != 1 || !strings.Contains(got[0], tc.want)) {
			t.Errorf("%v: errors %q, want one containing %q", tc.args, got, tc.want)
		}
	}
}
