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
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	componentbaseconfig "k8s.io/component-base/config"

	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
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
	// NodeDrain runs the declarative node drain requester.
	NodeDrain bool
	// NodeDrainRequester is the requester name of the node drain.
	NodeDrainRequester string
	// NodeDrainWorkers is the number of nodes synced in parallel.
	NodeDrainWorkers int
	LeaderElection   componentbaseconfig.LeaderElectionConfiguration
}

// NewControllerOptions returns the defaults: the eviction request controller
// enabled and leader-elected on the Lease
// evictionrequest-controller of its namespace, the node drain off.
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
		Client:             options.NewClientOptions(100, 200),
		NodeDrainRequester: nodedrain.DefaultRequesterName,
		NodeDrainWorkers:   2,
		LeaderElection:     options.NewLeaderElection(evictionrequest.ControllerName),
	}
}

// AddFlags adds the controller flags to fs.
func (o *ControllerOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "enable-evictionrequest-controller", o.Enabled,
		"Run the eviction request controller (and the node drain requester, if enabled) in this process. Turn it off on replicas that only serve the API.")
	fs.IntVar(&o.Workers, "concurrent-evictionrequest-syncs", o.Workers,
		"Number of EvictionRequests the controller syncs in parallel.")
	o.Client.AddFlags(fs, "the in-process controllers (evictions, pod reads, node writes; events have a budget of their own with the same limits)")
	fs.BoolVar(&o.NodeDrain, "enable-node-drain-controller", o.NodeDrain,
		"Run the declarative node drain requester: drain nodes annotated evictionrequest.coordination.k8s.io/drain=true, "+
			"and request the eviction of the pods of nodes that report a graceful shutdown.")
	fs.StringVar(&o.NodeDrainRequester, "node-drain-requester-name", o.NodeDrainRequester,
		"Requester name (a DNS subdomain) under which the node drain requests evictions.")
	fs.IntVar(&o.NodeDrainWorkers, "concurrent-node-drain-syncs", o.NodeDrainWorkers,
		"Number of nodes the node drain syncs in parallel.")
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
	if o.NodeDrain {
		if msgs := validation.IsDNS1123Subdomain(o.NodeDrainRequester); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--node-drain-requester-name %q: %v", o.NodeDrainRequester, msgs))
		}
		if o.NodeDrainWorkers < 1 {
			errs = append(errs, fmt.Errorf("--concurrent-node-drain-syncs must be at least 1, got %d", o.NodeDrainWorkers))
		}
	}
	errs = append(errs, options.ValidateLeaderElection(o.LeaderElection)...)
	return errs
}

// ApplyTo turns the options into the controller configuration of the
// server, nil when the controllers are off.
func (o *ControllerOptions) ApplyTo(config *apiserver.Config) {
	if !o.Enabled {
		return
	}
	controller := &apiserver.ControllerConfig{
		Workers:        o.Workers,
		LeaderElection: o.LeaderElection,
		KubeConfig:     config.GenericConfig.ClientConfig,
		KubeAPIQPS:     o.Client.QPS,
		KubeAPIBurst:   o.Client.Burst,
		CallTimeout:    o.Client.CallTimeout,
	}
	if o.NodeDrain {
		controller.NodeDrain = &apiserver.NodeDrainConfig{Requester: o.NodeDrainRequester, Workers: o.NodeDrainWorkers}
	}
	config.ExtraConfig.Controller = controller
}
