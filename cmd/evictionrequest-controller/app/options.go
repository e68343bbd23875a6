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

// Package app holds the options and the command of
// evictionrequest-controller, the controllers of Kubernetes 1.37's
// lifecycle.k8s.io/v1alpha1 EvictionRequest API, in the Validate, Run
// flow of Kubernetes components.
package app

import (
	"errors"
	"fmt"
	"time"

	genericoptions "k8s.io/apiserver/pkg/server/options"
	cliflag "k8s.io/component-base/cli/flag"
	componentbaseconfig "k8s.io/component-base/config"
	logsapi "k8s.io/component-base/logs/api/v1"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// DefaultNodeDrainRequester is the requester name of the node drain on
// lifecycle.k8s.io, where requester names are domain-prefixed keys outside
// the reserved k8s.io and kubernetes.io domains.
const DefaultNodeDrainRequester = "evictionrequest.github.io/node-drain"

// Options are the command-line options of evictionrequest-controller.
type Options struct {
	Kubeconfig string
	// Controllers are the controllers to run, in kube-controller-manager's
	// syntax.
	Controllers *options.ControllersOptions
	// Workers is the number of objects each queue syncs in parallel.
	Workers int
	// HeartbeatDeadline is how long an active responder may go without a
	// heartbeat.
	HeartbeatDeadline time.Duration
	// NodeDrain configures the declarative node drain requester.
	NodeDrain *options.NodeDrainOptions
	// Client limits the client to kube-apiserver and bounds each call;
	// events have a budget of their own with the same limits.
	Client         *options.ClientOptions
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// Bridge is the eviction API bridge, served with TLS on SecureServing.
	Bridge        *options.BridgeOptions
	SecureServing *genericoptions.SecureServingOptions
	// Metrics serves /metrics, /healthz and /readyz over HTTPS, /metrics
	// to the callers kube-apiserver authorizes.
	Metrics *options.MetricsServingOptions
	Logs    *logsapi.LoggingConfiguration
}

// NewOptions returns the defaults: the controller and the default evictor,
// leader-elected on the Lease evictionrequest-controller of its namespace,
// the node drain off.
func NewOptions() *Options {
	return &Options{
		Controllers:       newControllersOptions(),
		Workers:           10,
		HeartbeatDeadline: lifecycleutil.HeartbeatDeadline,
		NodeDrain:         options.NewNodeDrainOptions(evictionapi.Lifecycle, DefaultNodeDrainRequester),
		// A drain writes about seven objects per pod (the Eviction, its
		// status, the evictor's entry, the requests' status, the eviction):
		// past this rate kube-apiserver on two cores, not the client, is
		// the limit (make bench-drain; docs/benchmarks.md has the figures).
		Client:         options.NewClientOptions(300, 600),
		LeaderElection: options.NewLeaderElection(componentName),
		Bridge:         options.NewBridgeOptions(),
		SecureServing:  newSecureServing(),
		Metrics:        options.NewMetricsServingOptions(),
		Logs:           logsapi.NewLoggingConfiguration(),
	}
}

// Flags returns the flags in named sections.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	fs := fss.FlagSet("controllers")
	o.Controllers.AddFlags(fs, controllersHelp)
	fs.IntVar(&o.Workers, "concurrent-evictionrequest-syncs", o.Workers,
		"Number of Evictions, of EvictionRequests, and of Evictions of the default evictor, each synced in parallel.")
	fs.DurationVar(&o.HeartbeatDeadline, "responder-heartbeat-deadline", o.HeartbeatDeadline,
		"How long an active responder may go without a heartbeat before it is Interrupted and the next one takes over. "+
			"kube-apiserver v1.37 refuses to end a turn sooner than 20m after the last heartbeat, so only longer deadlines are accepted.")
	_ = fs.MarkDeprecated("responder-heartbeat-deadline",
		"the API fixes the deadline at 20 minutes, as kube-controller-manager's controller does from Kubernetes 1.38 on; a longer one holds only while this controller runs")
	o.NodeDrain.AddFlags(fs)
	fs = fss.FlagSet("cluster")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the cluster; in-cluster when empty.")
	o.Client.AddFlags(fs, "the controllers")
	options.AddLeaderElectionFlags(&o.LeaderElection, fss.FlagSet("leader election"))
	bridgeFlags := fss.FlagSet("eviction bridge")
	o.Bridge.AddFlags(bridgeFlags)
	o.SecureServing.AddFlags(bridgeFlags)
	o.Metrics.AddFlags(fss.FlagSet("metrics"), fss.FlagSet("metrics authentication and authorization"))
	logsapi.AddFlags(o.Logs, fss.FlagSet("logging"))
	return fss
}

// Complete decides what the flags leave to it: which controllers run, and
// with them whether the node drain and the bridge do. It runs before
// Validate, which changes nothing.
func (o *Options) Complete() {
	o.Controllers.Complete()
	o.NodeDrain.Enabled = o.Controllers.Enabled(nodedrain.ControllerName)
	o.Bridge.Enabled = o.Controllers.Enabled(bridge.Name)
}

// Validate checks the options, after Complete.
func (o *Options) Validate() error {
	errs := o.Controllers.Validate()
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--concurrent-evictionrequest-syncs must be at least 1, got %d", o.Workers))
	}
	if err := lifecycle.ValidateDeadline(o.HeartbeatDeadline); err != nil {
		errs = append(errs, fmt.Errorf("--responder-heartbeat-deadline: %w", err))
	}
	errs = append(errs, o.NodeDrain.Validate()...)
	errs = append(errs, o.Client.Validate()...)
	errs = append(errs, o.Bridge.Validate()...)
	errs = append(errs, o.Metrics.Validate()...)
	if o.Bridge.Enabled {
		errs = append(errs, o.SecureServing.Validate()...)
	}
	errs = append(errs, options.ValidateLeaderElection(o.LeaderElection)...)
	return errors.Join(errs...)
}

// newSecureServing is where the eviction API bridge is served: port 8443,
// the certificate of --tls-cert-file or a self-signed one in --cert-dir.
func newSecureServing() *genericoptions.SecureServingOptions {
	ss := genericoptions.NewSecureServingOptions()
	ss.BindPort = 8443
	ss.ServerCert.PairName = "eviction-bridge"
	ss.ServerCert.CertDirectory = "/tmp/evictionrequest-controller"
	return ss
}
