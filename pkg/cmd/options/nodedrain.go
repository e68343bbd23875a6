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

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// NodeDrainOptions configure the declarative node drain that
// evictionrequest-apiserver and evictionrequest-controller can run.
type NodeDrainOptions struct {
	// API is the API the drain requests evictions on, whose rule its
	// requester's name follows.
	API evictionapi.API
	// Enabled runs the drain: decided by --controllers (Complete).
	Enabled bool
	// Requester is the name under which the drain requests evictions.
	Requester string
	// Workers is the number of nodes synced in parallel.
	Workers int
	nodedrain.Options
}

// NewNodeDrainOptions returns the defaults: off, requesting evictions on
// api as requester.
func NewNodeDrainOptions(api evictionapi.API, requester string) *NodeDrainOptions {
	return &NodeDrainOptions{API: api, Requester: requester, Workers: 2, Options: nodedrain.Options{OnDeadline: drain.DefaultEscalation}}
}

// AddFlags adds the node drain's flags to fs.
func (o *NodeDrainOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Requester, "node-drain-requester-name", o.Requester,
		"Requester name ("+o.API.NameRule()+") under which the node drain requests evictions.")
	fs.IntVar(&o.Workers, "concurrent-node-drain-syncs", o.Workers, "Number of nodes the node drain syncs in parallel.")
	fs.DurationVar(&o.Deadline, "node-drain-deadline", o.Deadline,
		"How long the drain of a node waits for interceptors and PodDisruptionBudgets before --node-drain-on-deadline; 0 waits as long as they take. "+
			"A Node's annotations evictionrequest.coordination.k8s.io/drain-deadline and drain-on-deadline override both. A drain for a graceful shutdown has no deadline.")
	fs.Var(&o.OnDeadline, "node-drain-on-deadline",
		"What the drain of a node does at its deadline with pods left: fail (report who blocks on the Node; the requests stay), "+
			"evict (evict the pods left through the Eviction API, skipping the interceptors left) or delete (delete them, PodDisruptionBudgets ignored).")
	fs.IntVar(&o.MaxConcurrentDrains, "max-concurrent-node-drains", o.MaxConcurrentDrains,
		"How many nodes an admin's or a maintenance tool's drain runs on at once; the others wait, oldest first, uncordoned, "+
			"shown as DrainInProgress=False with reason EvictionRequestNodeDrainQueued. 0 is no limit. Drains for a graceful shutdown neither wait nor count.")
	fs.StringVar(&o.PoolLabel, "node-drain-pool-label", o.PoolLabel,
		"A Node label whose values name pools of nodes (for example karpenter.sh/nodepool or cloud.google.com/gke-nodepool): "+
			"each pool gets its own --max-concurrent-node-drains-per-pool. Nodes without the label are in no pool.")
	fs.Var(&o.PoolBudget, "max-concurrent-node-drains-per-pool",
		"How many nodes of each pool (--node-drain-pool-label) an admin's or a maintenance tool's drain runs on at once: a number, "+
			"or a percentage of the pool's nodes rounded up (at least one). The others wait as --max-concurrent-node-drains describes; "+
			"a node must have room in both budgets. Empty is no limit.")
	fs.BoolVar(&o.DrainOnMaintenancePlanned, "drain-on-maintenance-planned", o.DrainOnMaintenancePlanned,
		"Also drain nodes whose MaintenancePlanned condition (Kubernetes 1.37) is True, as if annotated, until the condition goes; "+
			"the drain ends with Drained=True, which a maintenance tool waits for.")
}

// Validate checks the options, the requester's name by the rule of the
// drain's API.
func (o *NodeDrainOptions) Validate() []error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	if err := o.API.ValidateName(o.Requester); err != nil {
		errs = append(errs, fmt.Errorf("--node-drain-requester-name %q: %w", o.Requester, err))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--concurrent-node-drain-syncs must be at least 1, got %d", o.Workers))
	}
	if o.MaxConcurrentDrains < 0 {
		errs = append(errs, fmt.Errorf("--max-concurrent-node-drains must not be negative, got %d", o.MaxConcurrentDrains))
	}
	if o.PoolLabel != "" {
		for _, msg := range validation.IsQualifiedName(o.PoolLabel) {
			errs = append(errs, fmt.Errorf("--node-drain-pool-label %q: %s", o.PoolLabel, msg))
		}
	}
	if (o.PoolLabel == "") != !o.PoolBudget.IsSet() {
		errs = append(errs, fmt.Errorf("--node-drain-pool-label and --max-concurrent-node-drains-per-pool go together"))
	}
	if o.Deadline < 0 {
		errs = append(errs, fmt.Errorf("--node-drain-deadline must not be negative"))
	}
	return errs
}
