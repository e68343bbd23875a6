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

	cliflag "k8s.io/component-base/cli/flag"

	"github.com/spf13/cobra"
	"k8s.io/component-base/term"

	"github.com/evictionrequest/apiserver/pkg/version"
)

// NewCommandStartServer returns the command that runs
// evictionrequest-apiserver with the given default options until ctx is
// canceled.
func NewCommandStartServer(ctx context.Context, defaults *Options) *cobra.Command {
	o := *defaults
	cmd := &cobra.Command{
		Use:   "evictionrequest-apiserver",
		Short: "Serve the EvictionRequest API (coordination.k8s.io/v1alpha1) as an aggregated API server",
		Long: `evictionrequest-apiserver serves EvictionRequests of KEP-4563 in coordination.k8s.io/v1alpha1
from its own etcd (embedded when --etcd-servers is not set), behind the kube-apiserver aggregation
layer, and enforces the KEP's rules in its registry and its admission plugin.`,
		Version: version.Get(),
		Args:    cobra.NoArgs,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return o.ComponentGlobalsRegistry.Set()
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	cmd.SetContext(ctx)
	namedFlagSets := o.Flags()
	for _, fs := range namedFlagSets.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, namedFlagSets, cols)
	return cmd
}
