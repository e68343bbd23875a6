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
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"

	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest"
)

// ControllerOptions configure the eviction request controller the server runs
// in-process.
type ControllerOptions struct {
	// Enabled runs the controller; split deployments turn it off on the
	// replicas that only serve the API.
	Enabled bool
	// Workers is the number of EvictionRequests synced in parallel.
	Workers        int
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
}

// NewControllerOptions returns the defaults: enabled, leader-elected on the
// Lease evictionrequest-system/evictionrequest-controller.
func NewControllerOptions() *ControllerOptions {
	return &ControllerOptions{
		Enabled: true,
		Workers: 5,
		LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect:       true,
			LeaseDuration:     metav1.Duration{Duration: 15 * time.Second},
			RenewDeadline:     metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod:       metav1.Duration{Duration: 2 * time.Second},
			ResourceLock:      "leases",
			ResourceName:      evictionrequest.ControllerName,
			ResourceNamespace: "evictionrequest-system",
		},
	}
}

// AddFlags adds the controller flags to fs.
func (o *ControllerOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "enable-evictionrequest-controller", o.Enabled,
		"Run the eviction request controller in this process. Turn it off on replicas that only serve the API.")
	fs.IntVar(&o.Workers, "concurrent-evictionrequest-syncs", o.Workers,
		"Number of EvictionRequests the controller syncs in parallel.")
	componentbaseoptions.BindLeaderElectionFlags(&o.LeaderElection, fs)
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
	le := o.LeaderElection
	if le.LeaderElect {
		if le.ResourceLock != "leases" {
			errs = append(errs, fmt.Errorf("--leader-elect-resource-lock must be leases, got %q", le.ResourceLock))
		}
		if le.ResourceName == "" || le.ResourceNamespace == "" {
			errs = append(errs, fmt.Errorf("--leader-elect-resource-name and --leader-elect-resource-namespace must be set"))
		}
		if le.RenewDeadline.Duration <= 0 || le.RetryPeriod.Duration <= 0 || le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
			errs = append(errs, fmt.Errorf("leader election needs 0 < --leader-elect-retry-period and 0 < --leader-elect-renew-deadline < --leader-elect-lease-duration"))
		}
	}
	return errs
}

// ApplyTo turns the options into the controller configuration of the
// server, nil when the controller is off.
func (o *ControllerOptions) ApplyTo(config *apiserver.Config) {
	if !o.Enabled {
		return
	}
	config.ExtraConfig.Controller = &apiserver.ControllerConfig{
		Workers:        o.Workers,
		LeaderElection: o.LeaderElection,
		KubeConfig:     config.GenericConfig.ClientConfig,
	}
}
