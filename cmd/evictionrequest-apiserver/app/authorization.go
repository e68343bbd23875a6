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
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/authorization/union"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// AuthorizationClientOptions are the client-side rate limits of the
// SubjectAccessReviews the delegated authorizer sends to kube-apiserver.
//
// Every write of a caller outside system:masters costs one or two reviews
// that no cache answers (its own verb on that request's name, and
// admission's delete of that pod), so these limits bound the writes per
// second of every interceptor and requester together. k8s.io/apiserver
// hard-codes them at 200 QPS / 400 burst, which held a service account to
// half as many status writes per second.
type AuthorizationClientOptions struct {
	QPS   float32
	Burst int
}

// NewAuthorizationClientOptions returns limits for about 1000 writes per
// second of ordinary users.
func NewAuthorizationClientOptions() *AuthorizationClientOptions {
	return &AuthorizationClientOptions{QPS: 1000, Burst: 2000}
}

// AddFlags adds the limits' flags to fs.
func (o *AuthorizationClientOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Float32Var(&o.QPS, "authorization-kube-api-qps", o.QPS,
		"Queries per second of the SubjectAccessReviews sent to kube-apiserver for delegated authorization. "+
			"Each write of a caller outside system:masters costs one or two reviews the cache does not answer.")
	fs.IntVar(&o.Burst, "authorization-kube-api-burst", o.Burst,
		"Burst of the SubjectAccessReviews sent to kube-apiserver for delegated authorization.")
}

// Validate checks the limits.
func (o *AuthorizationClientOptions) Validate() []error {
	var errs []error
	if o.QPS <= 0 {
		errs = append(errs, fmt.Errorf("--authorization-kube-api-qps must be positive, got %v", o.QPS))
	}
	if o.Burst < 1 {
		errs = append(errs, fmt.Errorf("--authorization-kube-api-burst must be at least 1, got %d", o.Burst))
	}
	return errs
}

// NewAuthorizer builds the authorizer that delegated authorization builds
// from opts, in the same order (the always-allowed groups, then paths, then
// SubjectAccessReviews with opts' caches and retries), except that the
// review client has these limits. It returns nil, nil when opts is nil, or
// when it allows no kubeconfig and the server runs outside a cluster: the
// library's authorizer stays then.
func (o *AuthorizationClientOptions) NewAuthorizer(opts *genericoptions.DelegatingAuthorizationOptions) (authorizer.Authorizer, error) {
	if opts == nil {
		return nil, nil
	}
	config, err := authorizationClientConfig(opts)
	if err != nil || config == nil {
		return nil, err
	}
	config.QPS, config.Burst, config.Timeout = o.QPS, o.Burst, opts.ClientTimeout
	// The webhook authorizer posts its reviews through the raw REST client,
	// which speaks JSON unless told otherwise; encoding and parsing JSON
	// reviews showed in both servers' CPU profiles under a service
	// account's writes.
	config.ContentType = runtime.ContentTypeProtobuf
	config.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	if opts.CustomRoundTripperFn != nil {
		config.Wrap(opts.CustomRoundTripperFn)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}

	var authorizers []union.NamedAuthorizer
	if len(opts.AlwaysAllowGroups) > 0 {
		authorizers = append(authorizers, union.NamedAuthorizer{
			AuthorizerName: "kubernetes.io/always-allow-groups",
			Authorizer:     authorizerfactory.NewPrivilegedGroups(opts.AlwaysAllowGroups...),
		})
	}
	if len(opts.AlwaysAllowPaths) > 0 {
		paths, err := path.NewAuthorizer(opts.AlwaysAllowPaths)
		if err != nil {
			return nil, err
		}
		authorizers = append(authorizers, union.NamedAuthorizer{AuthorizerName: "kubernetes.io/always-allow-paths", Authorizer: paths})
	}
	reviews, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		AllowCacheTTL:             opts.AllowCacheTTL,
		DenyCacheTTL:              opts.DenyCacheTTL,
		WebhookRetryBackoff:       opts.WebhookRetryBackoff,
	}.New()
	if err != nil {
		return nil, err
	}
	authorizers = append(authorizers, union.NamedAuthorizer{AuthorizerName: "kubernetes.io/webhook", Authorizer: reviews})
	return union.New(authorizers...)
}

// authorizationClientConfig finds the cluster as delegated authorization
// does: --authorization-kubeconfig, else the in-cluster configuration.
func authorizationClientConfig(opts *genericoptions.DelegatingAuthorizationOptions) (*rest.Config, error) {
	if opts.RemoteKubeConfigFile != "" {
		loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: opts.RemoteKubeConfigFile}, &clientcmd.ConfigOverrides{})
		config, err := loader.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("the delegated authorization kubeconfig: %w", err)
		}
		return config, nil
	}
	config, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) && opts.RemoteKubeConfigFileOptional {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the delegated authorization kubeconfig: %w", err)
	}
	return config, nil
}
