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
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/version"
)

// DefaultRequesterName is the requester the plugin lists itself under in
// spec.requesters on coordination.k8s.io.
const DefaultRequesterName = "kubectl.evictionrequest.coordination.k8s.io"

// DefaultLifecycleRequesterName is the requester of the plugin's
// EvictionRequests on lifecycle.k8s.io, where names are domain-prefixed keys
// outside the reserved k8s.io domain.
const DefaultLifecycleRequesterName = "evictionrequest.github.io/kubectl"

// NewCommand returns the kubectl-evictionrequest command.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
		API:         "auto",
		// A drain writes one request per pod: the client's rate is the
		// drain's (make bench-drain; docs/benchmarks.md).
		Client: options.NewClientOptions(100, 200),
	}
	cmd := &cobra.Command{
		Use:   "kubectl-evictionrequest",
		Short: "Drain nodes and evict pods through EvictionRequests (KEP-4563)",
		Long: `kubectl evictionrequest asks for pods to leave their nodes through EvictionRequests, so that
each pod's interceptors (its owner, an operator, a migration tool) take part before it goes, and
shows how far each eviction has come: who is active, its heartbeat and ETA, failed evictions and
the PodDisruptionBudget that blocks them.`,
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	flags := cmd.PersistentFlags()
	o.ConfigFlags.AddFlags(flags)
	flags.StringVar(&o.API, "api", o.API, "EvictionRequest API to speak: auto (coordination.k8s.io when evictionrequest-apiserver is installed, else lifecycle.k8s.io), coordination or lifecycle.")
	flags.StringVar(&o.Requester, "requester", o.Requester, "Requester name of the plugin's EvictionRequests: a DNS subdomain on coordination.k8s.io (default "+
		DefaultRequesterName+"), a domain-prefixed key on lifecycle.k8s.io (default "+DefaultLifecycleRequesterName+").")
	o.Client.AddFlags(flags, "the plugin")
	// The name of earlier releases, kept working.
	flags.DurationVar(&o.Client.CallTimeout, "call-timeout", o.Client.CallTimeout, "Timeout of each call to kube-apiserver.")
	_ = flags.MarkDeprecated("call-timeout", "use --kube-api-call-timeout")
	cmd.AddCommand(
		newDrainCommand(o),
		newRequestCommand(o),
		newWithdrawCommand(o),
		newStatusCommand(o),
		newExplainCommand(o),
	)
	return cmd
}
