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

package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/stepaside"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
)

// knownController is a controller --controllers names.
type knownController struct {
	name string
	// offByDefault controllers run only when named: "*" does not start them.
	offByDefault bool
}

// knownControllers are the controllers of evictionrequest-controller, by the
// names --controllers takes: kube-controller-manager's for the two it runs
// from Kubernetes 1.38 on, the project's own for the node drain and the
// eviction API bridge.
var knownControllers = []knownController{
	{name: stepaside.ControllerName},
	{name: lifecycle.ControllerName},
	{name: evictor.ControllerName},
	{name: nodedrain.ControllerName, offByDefault: true},
	{name: bridge.Name, offByDefault: true},
}

// controllersHelp is the help of --controllers.
func controllersHelp() string {
	var on, off []string
	for _, c := range knownControllers {
		if c.offByDefault {
			off = append(off, c.name)
		} else {
			on = append(on, c.name)
		}
	}
	return fmt.Sprintf("Controllers to run, as kube-controller-manager's --controllers: '*' runs those on by default (%s), 'name' runs one, '-name' stops one; "+
		"the flag may be given several times. Off by default: %s (also --enable-node-drain-controller, --enable-eviction-bridge). "+
		"On Kubernetes 1.38 and later, kube-controller-manager runs evictionrequest-controller and imperative-eviction-responder-controller itself "+
		"when its EvictionRequestAPI feature gate is on: each of these two then steps aside on its own at the first write of its namesake it sees "+
		"(trusted while the ValidatingAdmissionPolicy "+stepaside.PolicyName+" reserves the name for kube-controller-manager), "+
		"and records it in the ConfigMap "+stepaside.RecordName+" of its namespace, which keeps it aside across restarts until an admin removes it; "+
		"name them with '-' to run the node drain and the bridge only, or name "+stepaside.ControllerName+" with '-' to never step aside on their own.",
		strings.Join(on, ", "), strings.Join(off, ", "))
}

// controllerEnabled is true when controllers, in kube-controller-manager's
// syntax, run the controller name: named, or '*' for one on by default; a
// '-name' stops it whatever '*' says.
func controllerEnabled(name string, offByDefault bool, controllers []string) bool {
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

// validateControllers refuses a name --controllers does not know.
func validateControllers(controllers []string) error {
	for _, c := range controllers {
		name := strings.TrimPrefix(c, "-")
		if c == "*" || slices.ContainsFunc(knownControllers, func(k knownController) bool { return k.name == name }) {
			continue
		}
		var names []string
		for _, k := range knownControllers {
			names = append(names, k.name)
		}
		return fmt.Errorf("--controllers: %q is not a controller of evictionrequest-controller; known: *, %s", c, strings.Join(names, ", "))
	}
	return nil
}
