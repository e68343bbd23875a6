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

	"github.com/spf13/cobra"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/version"
)

// NewCommand returns the surge-interceptor command, run until ctx ends.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "surge-interceptor",
		Short: "Replace the pods of Deployments by a surge before they are evicted",
		Long: `surge-interceptor is the deployment.apps.k8s.io interceptor of EvictionRequests (KEP-4563): when the
eviction of a pod of a Deployment is requested, it scales the Deployment up first, waits until the
replacements are available on other nodes, and scales it back so that exactly the evicted pod is
removed. Pods opt in through the evictionrequest.coordination.k8s.io/interceptors annotation of
their Deployment's pod template.`,
		Version:      version.Get(),
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	options.AddNamedFlags(cmd, o.Flags())
	return cmd
}
