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

	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// The node drain's flags are checked together: a pool budget needs the
// label that names the pools. Each value's syntax is checked when the
// flags are parsed, with a message naming the flag.
func TestNodeDrainOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: nil},
		{args: []string{"--node-drain-requester-name=drain.example.com"}, want: `--node-drain-requester-name "drain.example.com": "drain.example.com" must be prefixed with a domain`},
		{args: []string{"--max-concurrent-node-drains=3", "--node-drain-pool-label=pool", "--max-concurrent-node-drains-per-pool=25%", "--node-drain-deadline=1h", "--node-drain-on-deadline=evict"}},
		{args: []string{"--max-concurrent-node-drains=-1"}, want: "--max-concurrent-node-drains must not be negative"},
		{args: []string{"--node-drain-pool-label=pool"}, want: "go together"},
		{args: []string{"--max-concurrent-node-drains-per-pool=2"}, want: "go together"},
		{args: []string{"--node-drain-pool-label=pool", "--max-concurrent-node-drains-per-pool=0"}, want: `invalid argument "0" for "--max-concurrent-node-drains-per-pool" flag: must be a positive number or percentage`},
		{args: []string{"--node-drain-pool-label=not a label", "--max-concurrent-node-drains-per-pool=1"}, want: `--node-drain-pool-label "not a label"`},
		{args: []string{"--node-drain-on-deadline=wait"}, want: `invalid argument "wait" for "--node-drain-on-deadline" flag: "wait" is not one of fail, evict, delete`},
	} {
		o := NewNodeDrainOptions(evictionapi.Lifecycle, "drain.example.com/node-drain")
		o.Enabled = true
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		var errs []error
		if err := fs.Parse(tc.args); err != nil {
			errs = []error{err}
		} else {
			errs = o.Validate()
		}
		var got []string
		for _, err := range errs {
			got = append(got, err.Error())
		}
		if tc.want == "" && len(errs) != 0 || tc.want != "" && (len(errs) != 1 || !strings.Contains(got[0], tc.want)) {
			t.Errorf("%v: errors %q, want one containing %q", tc.args, got, tc.want)
		}
	}
}
