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

// Package app is the kubectl plugin kubectl-evictionrequest: it drains
// nodes through EvictionRequests with visible progress, requests and
// withdraws the eviction of pods, and shows where each eviction stands. It
// takes kubectl's own flags (--kubeconfig, --context, -n, --as, ...) through
// k8s.io/cli-runtime.
package app

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/version"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// fieldManager is the field manager of the plugin's writes to Nodes.
const fieldManager = "kubectl-evictionrequest"

// Options are the flags every command shares.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	// Requester is the requester name of the plugin's EvictionRequests;
	// empty is the default of the API.
	Requester string
	// API is the EvictionRequest API to speak: auto (discovered),
	// coordination or lifecycle.
	API string
	// Client limits the plugin's client, which a drain needs to write one
	// request per pod faster than client-go's default of 5 requests/s,
	// and bounds each call.
	Client *options.ClientOptions

	kube kubernetes.Interface
	evr  versioned.Interface
	// participant requests, withdraws and reads the evictions as the
	// plugin's requester, on the API the cluster serves.
	participant participant.Participant
	namespace   string
	// enforceNamespace is true when -n was given.
	enforceNamespace bool
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
	if err := o.completeParticipant(); err != nil {
		return err
	}
	o.namespace, o.enforceNamespace, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	return err
}

// completeParticipant finds the API to speak and builds the plugin's
// requester on it.
func (o *Options) completeParticipant() error {
	api, err := evictionapi.Parse(o.API)
	if err != nil {
		return fmt.Errorf("--api: %w", err)
	}
	if api, err = evictionapi.Discover(o.kube.Discovery(), api); err != nil {
		return err
	}
	if o.participant, err = o.newParticipant(api, requester.Options{CallTimeout: o.Client.CallTimeout}); err != nil {
		return fmt.Errorf("--requester: %w", err)
	}
	return nil
}

// newParticipant is the plugin's requester on api, with opts.
func (o *Options) newParticipant(api evictionapi.API, opts requester.Options) (participant.Participant, error) {
	name := o.Requester
	if name == "" {
		name = DefaultRequesterName
		if api == evictionapi.Lifecycle {
			name = DefaultLifecycleRequesterName
		}
	}
	return participant.New(api, name, o.kube, o.evr, opts)
}

// requesterName is the plugin's requester name on its API.
func (o *Options) requesterName() string {
	return o.participant.Name()
}

// api is the API the plugin speaks.
func (o *Options) api() evictionapi.API {
	return o.participant.API()
}

// call returns a context for one API call.
func (o *Options) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, o.Client.CallTimeout)
}
