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
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"
)

// NewLeaderElection returns leader election on the Lease name in the
// namespace the process runs in (InstallNamespace), on by default, with the
// timings of kube-controller-manager.
func NewLeaderElection(name string) componentbaseconfig.LeaderElectionConfiguration {
	return componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect:       true,
		LeaseDuration:     metav1.Duration{Duration: 15 * time.Second},
		RenewDeadline:     metav1.Duration{Duration: 10 * time.Second},
		RetryPeriod:       metav1.Duration{Duration: 2 * time.Second},
		ResourceLock:      "leases",
		ResourceName:      name,
		ResourceNamespace: InstallNamespace(),
	}
}

// AddLeaderElectionFlags adds component-base's --leader-elect* flags.
func AddLeaderElectionFlags(le *componentbaseconfig.LeaderElectionConfiguration, fs *pflag.FlagSet) {
	componentbaseoptions.BindLeaderElectionFlags(le, fs)
}

// ValidateLeaderElection checks leader election when it is on.
func ValidateLeaderElection(le componentbaseconfig.LeaderElectionConfiguration) []error {
	if !le.LeaderElect {
		return nil
	}
	var errs []error
	if le.ResourceLock != "leases" {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-lock must be leases, got %q", le.ResourceLock))
	}
	if le.ResourceName == "" || le.ResourceNamespace == "" {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-name and --leader-elect-resource-namespace must be set"))
	}
	if le.RenewDeadline.Duration <= 0 || le.RetryPeriod.Duration <= 0 || le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
		errs = append(errs, fmt.Errorf("leader election needs 0 < --leader-elect-retry-period and 0 < --leader-elect-renew-deadline < --leader-elect-lease-duration"))
	}
	return errs
}
