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

// NewCommand returns the evictionrequest-controller command, run until ctx
// ends.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "evictionrequest-controller",
		Short: "Run the controllers of the lifecycle.k8s.io/v1alpha1 EvictionRequest API",
		Long: `evictionrequest-controller runs the controllers that Kubernetes 1.37's lifecycle.k8s.io/v1alpha1
EvictionRequest API (KEP-4563) describes and no Kubernetes release ships: the evictionrequest-controller,
which turns the EvictionRequests of a pod into one Eviction and hands it from responder to responder, and
the default responder imperative-eviction.k8s.io/evictor, which evicts the pod through the Eviction API.
kube-apiserver must serve the API: --feature-gates=EvictionRequestAPI=true and
--runtime-config=lifecycle.k8s.io/v1alpha1=true.`,
		Version:      version.Get(),
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete()
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
