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
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

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
	// QPS and Burst limit the plugin's client: a drain writes one request
	// per pod, which client-go's default of 5 requests/s would throttle.
	QPS   float32
	Burst int
	// CallTimeout bounds every call to the API.
	CallTimeout time.Duration

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
		QPS:         50,
		Burst:       100,
		CallTimeout: 30 * time.Second,
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
	flags.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "Requests per second the plugin may send to kube-apiserver.")
	flags.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Burst of requests the plugin may send to kube-apiserver.")
	flags.DurationVar(&o.CallTimeout, "call-timeout", o.CallTimeout, "Timeout of each call to kube-apiserver.")
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
	if o.QPS <= 0 || o.Burst < 1 {
		return fmt.Errorf("--kube-api-qps must be positive and --kube-api-burst at least 1")
	}
	if o.CallTimeout <= 0 {
		return fmt.Errorf("--call-timeout must be positive")
	}
	config, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return err
	}
	config = rest.CopyConfig(config)
	config.QPS, config.Burst = o.QPS, o.Burst
	config.UserAgent = "kubectl-evictionrequest/" + version.Get()
	if o.kube, err = kubernetes.NewForConfig(config); err != nil {
		return err
	}
	if o.evr, err = versioned.NewForConfig(config); err != nil {
		return err
	}
	if o.requester, err = requester.New(o.Requester, o.evr, o.kube.CoreV1(), requester.Options{CallTimeout: o.CallTimeout}); err != nil {
		return fmt.Errorf("--requester: %w", err)
	}
	o.namespace, o.enforceNamespace, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	return err
}

// call returns a context for one API call.
func (o *Options) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, o.CallTimeout)
}
