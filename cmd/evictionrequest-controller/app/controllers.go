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
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/stepaside"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
)

// newControllersOptions are the controllers of evictionrequest-controller,
// by the names --controllers takes: kube-controller-manager's for the two
// it runs from Kubernetes 1.38 on, the project's own for the guard that
// steps them aside, the node drain and the eviction API bridge; and the
// flags of earlier releases that said the same.
func newControllersOptions() *options.ControllersOptions {
	return options.NewControllersOptions([]options.Controller{
		{Name: stepaside.ControllerName},
		{Name: lifecycle.ControllerName},
		{Name: evictor.ControllerName},
		{Name: nodedrain.ControllerName, OffByDefault: true},
		{Name: bridge.Name, OffByDefault: true},
	},
		options.LegacyFlag{Flag: "enable-node-drain-controller", Controllers: []string{nodedrain.ControllerName},
			Help: "Run the declarative node drain requester."},
		options.LegacyFlag{Flag: "enable-eviction-bridge", Controllers: []string{bridge.Name},
			Help: "Serve the eviction API bridge."},
		options.LegacyFlag{Flag: "enable-evictor", Default: true, Controllers: []string{evictor.ControllerName},
			Help: "Run the default responder imperative-eviction.k8s.io/evictor."},
	)
}

// controllersHelp is what --controllers' help says of this binary's
// controllers, after the syntax.
const controllersHelp = "On Kubernetes 1.38 and later, kube-controller-manager runs evictionrequest-controller and imperative-eviction-responder-controller itself " +
	"when its EvictionRequestAPI feature gate is on: each of these two then steps aside on its own at the first write of its namesake it sees " +
	"(trusted while the ValidatingAdmissionPolicy " + stepaside.PolicyName + " reserves the name for kube-controller-manager), " +
	"and records it in the ConfigMap " + stepaside.RecordName + " of its namespace, which keeps it aside across restarts until an admin removes it; " +
	"name them with '-' to run the node drain and the bridge only, or name " + stepaside.ControllerName + " with '-' to never step aside on their own."
