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

package assembly

import (
	"context"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// NodeDrain is the declarative node drain of a controller manager,
// configured by o, requesting evictions on o.API through the clients and
// informers of each term's context: the one assembly of the node drain,
// which evictionrequest-apiserver and evictionrequest-controller both run.
// The term's informers of requests must keep drain.RequestAnnotations.
func NodeDrain(o *options.NodeDrainOptions, client *options.ClientOptions) controllermanager.Descriptor {
	return controllermanager.Descriptor{
		Name: nodedrain.ControllerName, Enabled: o.Enabled, Informers: nodedrain.RegisterInformers,
		Init: func(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
			p, err := participant.New(o.API, o.Requester, cc.Client, cc.EvictionRequests,
				requester.Options{FieldManager: nodedrain.ControllerName, CallTimeout: client.CallTimeout})
			if err != nil {
				return nil, err
			}
			c, err := nodedrain.NewController(ctx, cc.Client, cc.EventClient, p,
				participant.Informers{Kube: cc.Informers, EvictionRequests: cc.EvictionRequestInformers}, cc.Clock, client.CallTimeout, o.Options)
			if err != nil {
				return nil, err
			}
			return controllermanager.WithWorkers(c, o.Workers), nil
		},
	}
}
