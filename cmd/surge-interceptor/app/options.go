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
// surge-interceptor, in the Validate, Run flow of Kubernetes components.
package app

import (
	"errors"
	"fmt"
	"time"

	cliflag "k8s.io/component-base/cli/flag"
	componentbaseconfig "k8s.io/component-base/config"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// Options are the command-line options of surge-interceptor.
type Options struct {
	Kubeconfig string
	// Name is the interceptor's name; empty is the default of the API.
	Name      string
	Namespace string
	// API is the EvictionRequest API to answer on: auto, coordination or
	// lifecycle.
	API string
	// Client limits the client to kube-apiserver and bounds each call.
	Client *options.ClientOptions
	// HeartbeatPeriod, PollInterval and JanitorPeriod pace the work.
	HeartbeatPeriod time.Duration
	PollInterval    time.Duration
	JanitorPeriod   time.Duration
	// LeaderElection runs the interceptor only while it holds its Lease.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// Metrics serves /metrics, /healthz and /readyz over HTTPS, /metrics
	// to the callers kube-apiserver authorizes.
	Metrics *options.MetricsServingOptions
	Logs    *logsapi.LoggingConfiguration

	// api is the API Run found.
	api evictionapi.API
}

// validName checks name as api names interceptors, or, before the API is
// discovered, as either does; empty is the default.
func validName(api evictionapi.API, name string) error {
	if name == "" {
		return nil
	}
	if err := api.ValidateName(name); err != nil {
		return fmt.Errorf("--name %q: %w", name, err)
	}
	return nil
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		API:            "auto",
		Client:         options.NewClientOptions(20, 40),
		PollInterval:   2 * time.Second,
		JanitorPeriod:  10 * time.Second,
		LeaderElection: options.NewLeaderElection("evictionrequest-surge-interceptor"),
		Metrics:        options.NewMetricsServingOptions(),
		Logs:           logsapi.NewLoggingConfiguration(),
	}
}

// Flags returns the flags in named sections.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	fs := fss.FlagSet("interceptor")
	fs.StringVar(&o.API, "api", o.API, "EvictionRequest API to answer on: auto (coordination.k8s.io when evictionrequest-apiserver is installed, else lifecycle.k8s.io), coordination or lifecycle.")
	fs.StringVar(&o.Name, "name", o.Name, "Interceptor name, as the pods' evictionrequest.coordination.k8s.io/interceptors annotation lists it (default "+surge.DefaultName+
		"), or the responder name of spec.evictionResponders on lifecycle.k8s.io (default "+surge.DefaultLifecycleName+").")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Only answer the EvictionRequests of this namespace; all when empty.")
	fs.DurationVar(&o.HeartbeatPeriod, "heartbeat-period", o.HeartbeatPeriod, "Heartbeat period while a surge runs; 0 is a tenth of the request's heartbeatDeadlineSeconds.")
	fs.DurationVar(&o.PollInterval, "poll-interval", o.PollInterval, "How often a surge looks again at the replacement pods while it waits for them.")
	fs.DurationVar(&o.JanitorPeriod, "janitor-period", o.JanitorPeriod, "How often surges whose request was withdrawn, canceled or passed on are undone.")
	fs = fss.FlagSet("cluster")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the cluster; in-cluster when empty.")
	o.Client.AddFlags(fs, "the interceptor")
	options.AddLeaderElectionFlags(&o.LeaderElection, fss.FlagSet("leader election"))
	o.Metrics.AddFlags(fss.FlagSet("metrics"), fss.FlagSet("metrics authentication and authorization"))
	logsapi.AddFlags(o.Logs, fss.FlagSet("logging"))
	return fss
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	api, err := evictionapi.Parse(o.API)
	if err != nil {
		errs = append(errs, fmt.Errorf("--api: %w", err))
	}
	if err := validName(api, o.Name); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.Client.Validate()...)
	for flag, d := range map[string]time.Duration{"--poll-interval": o.PollInterval, "--janitor-period": o.JanitorPeriod} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", flag))
		}
	}
	errs = append(errs, options.ValidateLeaderElection(o.LeaderElection)...)
	errs = append(errs, o.Metrics.Validate()...)
	return errors.Join(errs...)
}
