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

// Package options holds the command-line options the commands of the
// project share, so that they are spelled and checked alike: the client to
// kube-apiserver (QPS, burst, call timeout), leader election, the eviction
// API bridge and the node drain. Flags and validation only: package
// assembly builds the bridge and the drain from them.
package options

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

// ClientOptions are a command's client to kube-apiserver: how many requests
// it may send, and how long one call may take. A client-go rest.Config with
// no QPS is held to 5 requests/s: every command sets them on purpose.
type ClientOptions struct {
	QPS         float32
	Burst       int
	CallTimeout time.Duration
}

// NewClientOptions returns client options of qps and burst, with
// evictionapi.DefaultCallTimeout.
func NewClientOptions(qps float32, burst int) *ClientOptions {
	return &ClientOptions{QPS: qps, Burst: burst, CallTimeout: evictionapi.DefaultCallTimeout}
}

// AddFlags adds --kube-api-qps, --kube-api-burst and
// --kube-api-call-timeout to fs; what says what the client does, for the
// help.
func (o *ClientOptions) AddFlags(fs *pflag.FlagSet, what string) {
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "Requests per second "+what+" may send to kube-apiserver.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Burst of requests "+what+" may send to kube-apiserver.")
	fs.DurationVar(&o.CallTimeout, "kube-api-call-timeout", o.CallTimeout, "Timeout of each call "+what+" makes to kube-apiserver; a call that times out fails, or is retried where it can be.")
}

// Validate checks the options.
func (o *ClientOptions) Validate() []error {
	var errs []error
	if o.QPS <= 0 || o.Burst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be positive and --kube-api-burst at least 1, got %v and %d", o.QPS, o.Burst))
	}
	if o.CallTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-call-timeout must be positive, got %s", o.CallTimeout))
	}
	return errs
}

// ApplyTo returns a copy of config limited to the options' QPS and burst.
func (o *ClientOptions) ApplyTo(config *rest.Config) *rest.Config {
	config = rest.CopyConfig(config)
	config.QPS, config.Burst = o.QPS, o.Burst
	return config
}

// Config is the client configuration of kubeconfig (in-cluster when
// empty), limited to the options' QPS and burst, with userAgent.
func (o *ClientOptions) Config(kubeconfig, userAgent string) (*rest.Config, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return rest.AddUserAgent(o.ApplyTo(config), userAgent), nil
}

// Clients are two clientsets of config: client, and eventClient for the
// events, a rate limiter of its own so that events never delay the work.
// Their writes for a leadership term are fenced (leaderelect.FenceWrites):
// a leader that resumes after a freeze past its Lease writes nothing.
func Clients(config *rest.Config) (client, eventClient kubernetes.Interface, err error) {
	config = rest.CopyConfig(config)
	config.Wrap(leaderelect.FenceWrites)
	if client, err = kubernetes.NewForConfig(config); err != nil {
		return nil, nil, err
	}
	if eventClient, err = kubernetes.NewForConfig(config); err != nil {
		return nil, nil, err
	}
	return client, eventClient, nil
}
