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

package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	componentbaseconfig "k8s.io/component-base/config"

	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// ControllerOptions configure the controllers the server runs in-process:
// the eviction request controller and, when enabled, the node drain
// requester.
type ControllerOptions struct {
	// Enabled runs the controllers; split deployments turn them off on the
	// replicas that only serve the API.
	Enabled bool
	// Workers is the number of EvictionRequests synced in parallel.
	Workers int
	// Client limits the controllers' client to the cluster (evictions, pod
	// reads, node writes) and bounds each of its calls; events have a
	// budget of their own with the same limits, so that they never delay
	// an eviction.
	Client *options.ClientOptions
	// NodeDrain configures the declarative node drain requester.
	NodeDrain      *options.NodeDrainOptions
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
}

// NewControllerOptions returns the defaults: the eviction request controller
// enabled and leader-elected on the Lease evictionrequest-apiserver of its
// namespace, the node drain off.
func NewControllerOptions() *ControllerOptions {
	return &ControllerOptions{
		Enabled: true,
		// Every create costs the controller a selection write: with 5
		// workers, 1000 creates at ~500/s waited 1.1 s (p99) for their
		// interceptor, with 20 about 0.1 s (bench-system).
		Workers: 20,
		// A drain of a few hundred pods evicts them, reads them and records
		// events within seconds; client-go's default of 5 requests/s would
		// make it crawl.
		Client:         options.NewClientOptions(100, 200),
		NodeDrain:      options.NewNodeDrainOptions(nodedrain.DefaultRequesterName),
		LeaderElection: options.NewLeaderElection(componentName),
	}
}

// AddFlags adds the controller flags to fs.
func (o *ControllerOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "enable-evictionrequest-controller", o.Enabled,
		"Run the eviction request controller (and the node drain requester, if enabled) in this process. Turn it off on replicas that only serve the API.")
	fs.IntVar(&o.Workers, "concurrent-evictionrequest-syncs", o.Workers,
		"Number of EvictionRequests the controller syncs in parallel.")
	o.Client.AddFlags(fs, "the in-process controllers (evictions, pod reads, node writes; events have a budget of their own with the same limits)")
	o.NodeDrain.AddFlags(fs, "a DNS subdomain")
	options.AddLeaderElectionFlags(&o.LeaderElection, fs)
}

// Validate checks the controller options.
func (o *ControllerOptions) Validate() []error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--concurrent-evictionrequest-syncs must be at least 1, got %d", o.Workers))
	}
	errs = append(errs, o.Client.Validate()...)
	errs = append(errs, o.NodeDrain.Validate(func(name string) error {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			return errors.New(strings.Join(msgs, "; "))
		}
		return nil
	})...)
	errs = append(errs, options.ValidateLeaderElection(o.LeaderElection)...)
	return errs
}

// componentName names the server's controller manager: its logger, its
// clients' user agent and, by default, its Lease. Each component that runs
// controllers has a Lease of its own, so that evictionrequest-controller
// (lifecycle.k8s.io) in the same namespace never takes this one's turn.
const componentName = "evictionrequest-apiserver"

// ApplyTo sets the controller manager the server runs from a post-start
// hook, none when the controllers are off. It asks the server-wide informer
// factory, which the server starts before the hook runs, for the informers
// the controllers share with admission: one cache of the cluster's pods per
// process.
func (o *ControllerOptions) ApplyTo(config *apiserver.Config) error {
	if !o.Enabled {
		return nil
	}
	factory := config.GenericConfig.SharedInformerFactory
	if config.GenericConfig.ClientConfig == nil || factory == nil {
		return fmt.Errorf("the eviction request controller needs a kubeconfig of the cluster (--kubeconfig or in-cluster)")
	}
	client, eventClient, err := options.Clients(rest.AddUserAgent(o.Client.ApplyTo(config.GenericConfig.ClientConfig), componentName))
	if err != nil {
		return err
	}
	factory.Core().V1().Pods().Informer()
	if o.NodeDrain.Enabled {
		if err := nodedrain.AddPodIndexer(factory.Core().V1().Pods()); err != nil {
			return err
		}
		factory.Core().V1().Nodes().Informer()
		factory.Policy().V1().PodDisruptionBudgets().Informer()
	}
	metrics.Register()
	config.ExtraConfig.Controllers = &controllermanager.Manager{
		Name:            componentName,
		LeaderElection:  o.LeaderElection,
		Client:          client,
		EventClient:     eventClient,
		SharedInformers: factory,
		// The controllers read no labels, annotations or managedFields of
		// their requests (cachetransform.StripMetadata).
		EvictionRequestInformerOptions: []externalversions.SharedInformerOption{externalversions.WithTransform(cachetransform.StripMetadata)},
		Controllers: []controllermanager.Descriptor{
			{Name: coordinationcontroller.ControllerName, Enabled: true, Init: o.newEvictionRequestController},
			{Name: nodedrain.ControllerName, Enabled: o.NodeDrain.Enabled, Init: o.newNodeDrain},
		},
	}
	return nil
}

// newEvictionRequestController builds the eviction request controller.
func (o *ControllerOptions) newEvictionRequestController(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
	c, err := coordinationcontroller.NewController(ctx, cc.Client, cc.EvictionRequests.CoordinationV1alpha1(),
		cc.EvictionRequestInformers.Coordination().V1alpha1().EvictionRequests(), cc.Informers.Core().V1().Pods(), cc.Clock,
		coordinationcontroller.Options{EventClient: cc.EventClient, CallTimeout: o.Client.CallTimeout})
	if err != nil {
		return nil, err
	}
	return controllermanager.WithWorkers(c, o.Workers), nil
}

// newNodeDrain builds the declarative node drain and graceful-shutdown
// requester.
func (o *ControllerOptions) newNodeDrain(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
	p, err := participant.New(evictionapi.Coordination, o.NodeDrain.Requester, cc.Client, cc.EvictionRequests,
		requester.Options{FieldManager: nodedrain.ControllerName, CallTimeout: o.Client.CallTimeout})
	if err != nil {
		return nil, err
	}
	c, err := nodedrain.NewController(ctx, cc.Client, cc.EventClient, p, participant.Informers{EvictionRequests: cc.EvictionRequestInformers},
		cc.Informers.Core().V1().Nodes(), cc.Informers.Core().V1().Pods(),
		cc.Informers.Policy().V1().PodDisruptionBudgets(), cc.Clock, o.Client.CallTimeout, o.NodeDrain.Options)
	if err != nil {
		return nil, err
	}
	return controllermanager.WithWorkers(c, o.NodeDrain.Workers), nil
}
