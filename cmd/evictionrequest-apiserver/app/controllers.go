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
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	componentbaseconfig "k8s.io/component-base/config"

	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/cmd/assembly"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/controller/ttlaftercomplete"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// ControllerOptions configure the controllers the server runs in-process:
// the eviction request controller, the deletion of completed requests and,
// when named, the node drain requester and the eviction API bridge's.
type ControllerOptions struct {
	// Controllers are the controllers to run, in kube-controller-manager's
	// syntax; split deployments run none (--controllers=) on the replicas
	// that only serve the API.
	Controllers *options.ControllersOptions
	// Workers is the number of EvictionRequests synced in parallel.
	Workers int
	// Client limits the controllers' client to the cluster (evictions, pod
	// reads, node writes) and bounds each of its calls; events have a
	// budget of their own with the same limits, so that they never delay
	// an eviction.
	Client *options.ClientOptions
	// NodeDrain configures the declarative node drain requester.
	NodeDrain *options.NodeDrainOptions
	// CompletedTTL is how long a completed request stays before it is
	// deleted; zero keeps it.
	CompletedTTL   time.Duration
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
}

// NewControllerOptions returns the defaults: the eviction request controller
// enabled and leader-elected on the Lease evictionrequest-apiserver of its
// namespace, the node drain off.
func NewControllerOptions() *ControllerOptions {
	return &ControllerOptions{
		Controllers: options.NewControllersOptions([]options.Controller{
			{Name: coordinationcontroller.ControllerName},
			{Name: ttlaftercomplete.ControllerName},
			{Name: nodedrain.ControllerName, OffByDefault: true},
			{Name: bridge.Name, OffByDefault: true},
		},
			options.LegacyFlag{Flag: "enable-evictionrequest-controller", Default: true,
				Controllers: []string{coordinationcontroller.ControllerName, ttlaftercomplete.ControllerName, nodedrain.ControllerName},
				Help:        "Run the eviction request controller (and the node drain requester, if enabled) in this process."},
			options.LegacyFlag{Flag: "enable-node-drain-controller", Controllers: []string{nodedrain.ControllerName},
				Help: "Run the declarative node drain requester."},
			options.LegacyFlag{Flag: "enable-eviction-bridge", Controllers: []string{bridge.Name},
				Help: "Serve the eviction API bridge."},
		),
		// Every create costs the controller a selection write: a burst of
		// creates waits for its interceptor in the queue unless enough
		// workers write at once (make bench-system measures the wait;
		// docs/benchmarks.md).
		Workers: 20,
		// A drain of a few hundred pods evicts them, reads them and records
		// events within seconds; client-go's default of 5 requests/s would
		// make it crawl.
		Client:         options.NewClientOptions(100, 200),
		NodeDrain:      options.NewNodeDrainOptions(evictionapi.Coordination, nodedrain.DefaultRequesterName),
		CompletedTTL:   ttlaftercomplete.DefaultTTL,
		LeaderElection: options.NewLeaderElection(componentName),
	}
}

// AddFlags adds the controller flags to fs.
func (o *ControllerOptions) AddFlags(fs *pflag.FlagSet) {
	o.Controllers.AddFlags(fs, "'--controllers=' runs none, on replicas that only serve the API. "+
		bridge.Name+" serves the eviction API bridge on every replica and keeps its webhook on the controllers' leader: it needs "+coordinationcontroller.ControllerName+".")
	fs.IntVar(&o.Workers, "concurrent-evictionrequest-syncs", o.Workers,
		"Number of EvictionRequests the controller syncs in parallel.")
	o.Client.AddFlags(fs, "the in-process controllers (evictions, pod reads, node writes; events have a budget of their own with the same limits)")
	o.NodeDrain.AddFlags(fs)
	fs.DurationVar(&o.CompletedTTL, "completed-evictionrequest-ttl", o.CompletedTTL,
		"How long an EvictionRequest stays once it is complete (its Complete condition True) before the controller deletes it, as a Job's ttlSecondsAfterFinished; 0 keeps completed requests.")
	options.AddLeaderElectionFlags(&o.LeaderElection, fs)
}

// Complete decides which controllers run.
func (o *ControllerOptions) Complete() {
	o.Controllers.Complete()
	o.NodeDrain.Enabled = o.Controllers.Enabled(nodedrain.ControllerName)
}

// Enabled is true when the server runs controllers at all, after Complete:
// then it elects a leader among its replicas.
func (o *ControllerOptions) Enabled() bool {
	return o.Controllers.Enabled(coordinationcontroller.ControllerName) || o.Controllers.Enabled(ttlaftercomplete.ControllerName) ||
		o.Controllers.Enabled(nodedrain.ControllerName)
}

// Validate checks the controller options, after Complete.
func (o *ControllerOptions) Validate() []error {
	errs := o.Controllers.Validate()
	if !o.Enabled() {
		return errs
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--concurrent-evictionrequest-syncs must be at least 1, got %d", o.Workers))
	}
	if o.CompletedTTL <= 0 {
		errs = append(errs, fmt.Errorf("--completed-evictionrequest-ttl must be positive, got %s (--controllers=*,-%s keeps completed requests)", o.CompletedTTL, ttlaftercomplete.ControllerName))
	}
	errs = append(errs, o.Client.Validate()...)
	errs = append(errs, o.NodeDrain.Validate()...)
	errs = append(errs, options.ValidateLeaderElection(o.LeaderElection)...)
	return errs
}

// componentName names the server's controller manager: its logger, its
// clients' user agent and, by default, its Lease. Each component that runs
// controllers has a Lease of its own, so that evictionrequest-controller
// (lifecycle.k8s.io) in the same namespace never takes this one's turn.
const componentName = "evictionrequest-apiserver"

// ApplyTo sets the controller manager the server runs from a post-start
// hook, none when the controllers are off. Its controllers share the
// server-wide informer factory, which the server starts before the hook
// runs: one cache of the cluster's pods per process, shared with
// admission. Their informers are registered on it here, before it starts.
func (o *ControllerOptions) ApplyTo(config *apiserver.Config) error {
	if !o.Enabled() {
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
	metrics.Register()
	m := &controllermanager.Manager{
		Name:            componentName,
		LeaderElection:  o.LeaderElection,
		Client:          client,
		EventClient:     eventClient,
		SharedInformers: factory,
		// The EvictionRequest informers keep no labels and no managedFields:
		// the eviction request controller reads neither, and writes only
		// /status. They keep the annotations the node drain reads of its
		// requests, to remove the deadline it announced when it withdraws.
		EvictionRequestInformerOptions: []externalversions.SharedInformerOption{
			externalversions.WithTransform(cachetransform.StripMetadataKeeping(requestAnnotationsRead(o.NodeDrain)...)),
		},
		Controllers: []controllermanager.Descriptor{
			{Name: coordinationcontroller.ControllerName, Enabled: o.Controllers.Enabled(coordinationcontroller.ControllerName),
				Informers: registerPods, Init: o.newEvictionRequestController},
			assembly.NodeDrain(o.NodeDrain, o.Client),
			{Name: ttlaftercomplete.ControllerName, Enabled: o.Controllers.Enabled(ttlaftercomplete.ControllerName), Init: o.newTTLController},
		},
	}
	if err := m.RegisterInformers(); err != nil {
		return err
	}
	config.ExtraConfig.Controllers = m
	return nil
}

// requestAnnotationsRead are the annotations of EvictionRequests the
// server's controllers read: the node drain's, when it runs.
func requestAnnotationsRead(nodeDrain *options.NodeDrainOptions) []string {
	if !nodeDrain.Enabled {
		return nil
	}
	return drain.RequestAnnotations
}

// registerPods registers the pod informer the eviction request controller
// reads.
func registerPods(factory informers.SharedInformerFactory) error {
	factory.Core().V1().Pods().Informer()
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

// ttlWorkers delete expired requests: a delete each, rarely many at once.
const ttlWorkers = 2

// newTTLController builds the controller that deletes completed requests
// after CompletedTTL.
func (o *ControllerOptions) newTTLController(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
	c, err := ttlaftercomplete.New(ctx, cc.EvictionRequests.CoordinationV1alpha1(),
		cc.EvictionRequestInformers.Coordination().V1alpha1().EvictionRequests(), o.CompletedTTL, cc.Clock, o.Client.CallTimeout)
	if err != nil {
		return nil, err
	}
	return controllermanager.WithWorkers(c, ttlWorkers), nil
}
