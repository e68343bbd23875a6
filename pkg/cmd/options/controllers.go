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
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Controller is one controller of a binary, as --controllers names it.
type Controller struct {
	// Name is its name in --controllers.
	Name string
	// OffByDefault controllers run only when named: '*' does not start
	// them.
	OffByDefault bool
}

// LegacyFlag is a deprecated boolean flag of an earlier release that turns
// controllers on (Default false) or off (Default true); --controllers says
// the same.
type LegacyFlag struct {
	// Flag is its name, Default its value when not given, Help its usage.
	Flag    string
	Default bool
	Help    string
	// Controllers are those it turns on or off.
	Controllers []string
	value       bool
}

// given is true when the flag says something its default does not.
func (l *LegacyFlag) given() bool {
	return l.value != l.Default
}

// spelling is what --controllers says in its place.
func (l *LegacyFlag) spelling() string {
	names := make([]string, len(l.Controllers))
	for i, name := range l.Controllers {
		names[i] = name
		if l.Default {
			names[i] = "-" + name
		}
	}
	return "--controllers=*," + strings.Join(names, ",")
}

// ControllersOptions choose the controllers a binary runs, in
// kube-controller-manager's --controllers syntax: '*' runs those on by
// default, 'name' runs one, '-name' stops one, and the flag may be given
// several times. Validate checks what was given; Complete, after it,
// decides, and Enabled then says.
type ControllersOptions struct {
	Controllers []string
	known       []Controller
	legacy      []*LegacyFlag
	enabled     map[string]bool
}

// NewControllersOptions returns the options of a binary that runs known,
// '*' by default, with its deprecated flags legacy.
func NewControllersOptions(known []Controller, legacy ...LegacyFlag) *ControllersOptions {
	o := &ControllersOptions{Controllers: []string{"*"}, known: known}
	for _, l := range legacy {
		l.value = l.Default
		o.legacy = append(o.legacy, &l)
	}
	return o
}

// AddFlags adds --controllers, with help about the binary's controllers
// after the syntax, and the deprecated flags, each naming its
// --controllers spelling.
func (o *ControllersOptions) AddFlags(fs *pflag.FlagSet, help string) {
	var on, off []string
	for _, c := range o.known {
		if c.OffByDefault {
			off = append(off, c.Name)
		} else {
			on = append(on, c.Name)
		}
	}
	usage := fmt.Sprintf("Controllers to run, as kube-controller-manager's --controllers: '*' runs those on by default (%s), 'name' runs one, '-name' stops one; "+
		"the flag may be given several times.", strings.Join(on, ", "))
	if len(off) > 0 {
		usage += " Off by default: " + strings.Join(off, ", ") + "."
	}
	if help != "" {
		usage += " " + help
	}
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, usage)
	for _, l := range o.legacy {
		fs.BoolVar(&l.value, l.Flag, l.Default, l.Help)
		_ = fs.MarkDeprecated(l.Flag, "use "+l.spelling())
	}
}

// Validate refuses a name --controllers does not know, and a deprecated
// flag that contradicts --controllers. It changes nothing.
func (o *ControllersOptions) Validate() []error {
	var errs []error
	for _, c := range o.Controllers {
		name := strings.TrimPrefix(c, "-")
		if c == "*" || slices.ContainsFunc(o.known, func(k Controller) bool { return k.Name == name }) {
			continue
		}
		names := make([]string, len(o.known))
		for i, k := range o.known {
			names[i] = k.Name
		}
		errs = append(errs, fmt.Errorf("--controllers: %q is not a controller of this binary; known: *, %s", c, strings.Join(names, ", ")))
	}
	for _, l := range o.legacy {
		if !l.given() {
			continue
		}
		for _, name := range l.Controllers {
			contrary := "-" + name
			if l.Default {
				contrary = name
			}
			if slices.Contains(o.Controllers, contrary) {
				errs = append(errs, fmt.Errorf("--controllers=%s contradicts --%s=%t: give one of them (%s)", contrary, l.Flag, l.value, l.spelling()))
			}
		}
	}
	return errs
}

// Complete decides which controllers run: --controllers, then the
// deprecated flags given.
func (o *ControllersOptions) Complete() {
	o.enabled = map[string]bool{}
	for _, c := range o.known {
		o.enabled[c.Name] = ControllerEnabled(c.Name, c.OffByDefault, o.Controllers)
	}
	for _, l := range o.legacy {
		if l.given() {
			for _, name := range l.Controllers {
				o.enabled[name] = l.value
			}
		}
	}
}

// Enabled is true when Complete decided that the controller name runs.
func (o *ControllersOptions) Enabled(name string) bool {
	if o.enabled == nil {
		panic("ControllersOptions.Enabled before Complete")
	}
	return o.enabled[name]
}

// ControllerEnabled is true when controllers, in kube-controller-manager's
// syntax, run the controller name: named, or '*' for one on by default; the
// first of 'name' and '-name' decides, as kube-controller-manager's
// IsControllerEnabled.
func ControllerEnabled(name string, offByDefault bool, controllers []string) bool {
	star := false
	for _, c := range controllers {
		switch c {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	return star && !offByDefault
}

// Disabled is true when controllers stop the controller name by '-name'
// before naming it: for a controller that runs beside others unless
// turned off by name.
func Disabled(name string, controllers []string) bool {
	return !ControllerEnabled(name, false, append(slices.Clone(controllers), "*"))
}
