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

// Package plugin is the kubectl plugin kubectl-evictionrequest: it drains
// nodes through EvictionRequests with visible progress, requests and
// withdraws the eviction of pods, and shows where each eviction stands. It
// takes kubectl's own flags (--kubeconfig, --context, -n, --as, ...) through
// k8s.io/cli-runtime.
package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/version"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// DefaultRequesterName is the requester the plugin lists itself under in
// spec.requesters.
const DefaultRequesterName = "kubectl.evictionrequest.coordination.k8s.io"

// Options are the flags every command shares.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	// Requester is the requester name of the plugin's EvictionRequests.
	Requester string
	// Client limits the plugin's client, which a drain needs to write one
	// request per pod faster than client-go's default of 5 requests/s,
	// and bounds each call.
	Client *options.ClientOptions

	kube      kubernetes.Interface
	evr       versioned.Interface
	requester *requester.Requester
	namespace string
	// enforceNamespace is true when -n was given.
	enforceNamespace bool
}

// NewCommand returns the kubectl-evictionrequest command.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
		Requester:   DefaultRequesterName,
		Client:      options.NewClientOptions(50, 100),
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
	flags.StringVar(&o.Requester, "requester", o.Requester, "Requester name (a DNS subdomain) the plugin lists itself under in spec.requesters.")
	o.Client.AddFlags(flags, "the plugin")
	// The name of earlier releases, kept working.
	flags.DurationVar(&o.Client.CallTimeout, "call-timeout", o.Client.CallTimeout, "Timeout of each call to kube-apiserver.")
	_ = flags.MarkDeprecated("call-timeout", "use --kube-api-call-timeout")
	cmd.AddCommand(
		newDrainCommand(o),
		newRequestCommand(o),
		newWithdrawCommand(o),
		newStatusCommand(o),
	)
	return cmd
}

// complete builds the clients from the kubectl flags.
func (o *Options) complete() error {
	if err := errors.Join(o.Client.Validate()...); err != nil {
		return err
	}
	config, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return err
	}
	config = o.Client.ApplyTo(config)
	config.UserAgent = "kubectl-evictionrequest/" + version.Get()
	if o.kube, err = kubernetes.NewForConfig(config); err != nil {
		return err
	}
	if o.evr, err = versioned.NewForConfig(config); err != nil {
		return err
	}
	if o.requester, err = requester.New(o.Requester, o.evr, o.kube.CoreV1(), requester.Options{CallTimeout: o.Client.CallTimeout}); err != nil {
		return fmt.Errorf("--requester: %w", err)
	}
	o.namespace, o.enforceNamespace, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	return err
}

// call returns a context for one API call.
func (o *Options) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, o.Client.CallTimeout)
}
