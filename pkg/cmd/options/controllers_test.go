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
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// newTestControllers are two controllers on by default, one off, and one
// deprecated flag of each kind.
func newTestControllers() *ControllersOptions {
	return NewControllersOptions([]Controller{{Name: "a"}, {Name: "b"}, {Name: "drain", OffByDefault: true}},
		LegacyFlag{Flag: "enable-drain", Controllers: []string{"drain"}, Help: "Run drain."},
		LegacyFlag{Flag: "enable-ab", Default: true, Controllers: []string{"a", "b"}, Help: "Run a and b."},
	)
}

// --controllers reads as kube-controller-manager's, the deprecated flags
// say what their --controllers spelling says, and Validate refuses an
// unknown name or a deprecated flag that --controllers contradicts.
func TestControllersOptions(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		enabled []string
		err     string
	}{
		{args: nil, enabled: []string{"a", "b"}},
		{args: []string{"--controllers="}, enabled: nil},
		{args: []string{"--controllers=*,drain"}, enabled: []string{"a", "b", "drain"}},
		{args: []string{"--controllers=*,-a"}, enabled: []string{"b"}},
		{args: []string{"--controllers=drain"}, enabled: []string{"drain"}},
		// A second --controllers adds to the first.
		{args: []string{"--controllers=*,-a", "--controllers=drain"}, enabled: []string{"b", "drain"}},
		// The first of 'name' and '-name' decides.
		{args: []string{"--controllers=-a,a,*"}, enabled: []string{"b"}},
		{args: []string{"--enable-drain"}, enabled: []string{"a", "b", "drain"}},
		{args: []string{"--enable-ab=false"}, enabled: nil},
		{args: []string{"--enable-ab=false", "--controllers=drain"}, enabled: []string{"drain"}},
		{args: []string{"--controllers=*,dran"}, err: `--controllers: "dran" is not a controller of this binary; known: *, a, b, drain`},
		{args: []string{"--controllers=*,-drain", "--enable-drain"}, err: "--controllers=-drain contradicts --enable-drain=true: give one of them (--controllers=*,drain)"},
		{args: []string{"--controllers=a", "--enable-ab=false"}, err: "--controllers=a contradicts --enable-ab=false: give one of them (--controllers=*,-a,-b)"},
	} {
		o := newTestControllers()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if err := errors.Join(o.Validate()...); tc.err != "" || err != nil {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: Validate %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		o.Complete()
		var enabled []string
		for _, name := range []string{"a", "b", "drain"} {
			if o.Enabled(name) {
				enabled = append(enabled, name)
			}
		}
		if !slices.Equal(enabled, tc.enabled) {
			t.Errorf("%v: enabled %v, want %v", tc.args, enabled, tc.enabled)
		}
	}
}

// The help lists the controllers on and off by default, and each
// deprecated flag names what to give instead.
func TestControllersHelp(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	newTestControllers().AddFlags(fs, "More.")
	if usage := fs.Lookup("controllers").Usage; !strings.Contains(usage, "on by default (a, b)") || !strings.Contains(usage, "Off by default: drain. More.") {
		t.Errorf("--controllers' help: %s", usage)
	}
	if d := fs.Lookup("enable-ab").Deprecated; d != "use --controllers=*,-a,-b" {
		t.Errorf("--enable-ab deprecated with %q", d)
	}
}

// Disabled is true only for a controller stopped by name.
func TestDisabled(t *testing.T) {
	for _, tc := range []struct {
		controllers []string
		want        bool
	}{
		{nil, false},
		{[]string{"*"}, false},
		{[]string{"a"}, false},
		{[]string{"*", "-guard"}, true},
		{[]string{"guard", "-guard"}, false},
	} {
		if got := Disabled("guard", tc.controllers); got != tc.want {
			t.Errorf("Disabled(guard, %v) = %t, want %t", tc.controllers, got, tc.want)
		}
	}
}
