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

// Package app holds the options and the command of
// evictionrequest-apiserver, in the Complete, Validate, Config, Run flow of
// Kubernetes API servers.
package app

import (
	"fmt"
	"strings"
	"sync"
	"time"

	cliflag "k8s.io/component-base/cli/flag"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/features"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/metrics"

	evictionrequestadmission "github.com/evictionrequest/apiserver/pkg/admission/plugin/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
)

const (
	// defaultEtcdPathPrefix is where the server keeps its objects in etcd.
	defaultEtcdPathPrefix = "/registry/coordination.k8s.io"
	// defaultSecurePort is a port a non-root process may bind.
	defaultSecurePort = 8443
)

// serviceDNSNames are the names the aggregator verifies our serving
// certificate against when the APIService points at the Service of
// artifacts/ in namespace; self-signed certificates include them.
func serviceDNSNames(namespace string) []string {
	service := "evictionrequest-apiserver." + namespace + ".svc"
	return []string{service, service + ".cluster.local"}
}

// defaultGates sets the defaults of the feature gates the server changes,
// once per process, before the gates reach a flag set (which freezes them).
var defaultGates = sync.OnceFunc(func() {
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
	// The watch cache's snapshots (one per write, copy-on-write) serve LISTs
	// at an older resourceVersion and the pages after the first from the
	// cache. Every EvictionRequest is written twice in a moment (created,
	// then its interceptor selected), and the node copies of those
	// snapshots stay until the watch history fills, a third more heap per
	// request held (make bench-system measures it; docs/benchmarks.md).
	// Without them such LISTs read the server's own etcd, as before
	// Kubernetes 1.34; --feature-gates=ListFromCacheSnapshot=true turns
	// them back on.
	utilruntime.Must(utilfeature.DefaultMutableFeatureGate.OverrideDefault(features.ListFromCacheSnapshot, false))
})

// Options are the command-line options of evictionrequest-apiserver.
type Options struct {
	RecommendedOptions *genericoptions.RecommendedOptions
	EmbeddedEtcd       *EmbeddedEtcdOptions
	// AuthorizationClient limits the delegated authorizer's reviews.
	AuthorizationClient *AuthorizationClientOptions
	Controller          *ControllerOptions
	Bridge              *options.BridgeOptions
	// ServingCertificate renews the serving certificate the chart
	// generates, on the controllers' leader.
	ServingCertificate *ServingCertificateOptions
	Logs               *logsapi.LoggingConfiguration
	// ComponentGlobalsRegistry holds the effective version and the feature gates.
	ComponentGlobalsRegistry basecompatibility.ComponentGlobalsRegistry

	// SelfSignedCertHosts are the extra DNS names of the self-signed serving
	// certificate generated when no --tls-cert-file is given.
	SelfSignedCertHosts []string
	// ShutdownWatchTerminationGracePeriod bounds how long a shutdown waits
	// for the watches, which are told to end at once; without it a watch
	// proxied by the aggregator would hold the shutdown for a minute.
	ShutdownWatchTerminationGracePeriod time.Duration
	// Metrics are the options of /metrics: hidden, disabled and
	// allow-listed metrics and labels.
	Metrics *metrics.Options
	// AnonymousAuth serves requests without credentials on every path as
	// system:anonymous; when false, only on AnonymousAuthPaths.
	AnonymousAuth bool
	// AnonymousAuthPaths are the paths, matched exactly, on which requests
	// without credentials are served as system:anonymous: the health
	// checks, so that probes need no credentials.
	AnonymousAuthPaths []string
}

// defaultAnonymousAuthPaths are the health checks kubelet probes call.
var defaultAnonymousAuthPaths = []string{"/healthz", "/livez", "/readyz"}

// NewOptions returns the default options.
func NewOptions() *Options {
	defaultGates()
	o := &Options{
		RecommendedOptions: genericoptions.NewRecommendedOptions(
			defaultEtcdPathPrefix,
			apiserver.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion),
		),
		EmbeddedEtcd:                        NewEmbeddedEtcdOptions(),
		AuthorizationClient:                 NewAuthorizationClientOptions(),
		Controller:                          NewControllerOptions(),
		Bridge:                              options.NewBridgeOptions(),
		ServingCertificate:                  NewServingCertificateOptions(),
		Logs:                                logsapi.NewLoggingConfiguration(),
		ComponentGlobalsRegistry:            compatibility.DefaultComponentGlobalsRegistry,
		SelfSignedCertHosts:                 serviceDNSNames(options.InstallNamespace()),
		ShutdownWatchTerminationGracePeriod: 5 * time.Second,
		Metrics:                             metrics.NewOptions(),
		AnonymousAuthPaths:                  defaultAnonymousAuthPaths,
	}
	o.RecommendedOptions.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(
		v1alpha1.SchemeGroupVersion, schema.GroupKind{Group: v1alpha1.GroupName})
	// As kube-apiserver stores its built-in types: protobuf costs a fraction
	// of JSON to decode, and the server decodes every object it writes and
	// every watch event of etcd. Objects stored as JSON stay readable.
	o.RecommendedOptions.Etcd.DefaultStorageMediaType = runtime.ContentTypeProtobuf
	o.RecommendedOptions.SecureServing.BindPort = defaultSecurePort
	// The EvictionRequest plugin runs after the generic plugins, and
	// ResourceQuota last, both enabled by default;
	// --disable-admission-plugins turns them off.
	evictionrequestadmission.Register(o.RecommendedOptions.Admission.Plugins)
	o.RecommendedOptions.Admission.RecommendedPluginOrder = append(o.RecommendedOptions.Admission.RecommendedPluginOrder, evictionrequestadmission.PluginName)
	addResourceQuota(o.RecommendedOptions.Admission)
	return o
}

// Flags returns every option's flags in named sections, as kube-apiserver
// prints them in --help.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	ro := o.RecommendedOptions
	generic := fss.FlagSet("generic")
	generic.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period", o.ShutdownWatchTerminationGracePeriod,
		"How long a shutdown waits for the active watches to drain; they are told to end when it starts, and their clients reconnect (to another replica).")
	o.ComponentGlobalsRegistry.AddFlags(generic)
	ro.Etcd.AddFlags(fss.FlagSet("etcd"))
	o.EmbeddedEtcd.AddFlags(fss.FlagSet("embedded etcd"))
	secureServing := fss.FlagSet("secure serving")
	ro.SecureServing.AddFlags(secureServing)
	o.ServingCertificate.AddFlags(secureServing)
	secureServing.StringSliceVar(&o.SelfSignedCertHosts, "self-signed-cert-hosts", o.SelfSignedCertHosts,
		"DNS names, besides localhost, of the self-signed serving certificate generated when --tls-cert-file is not set. "+
			"Include <service>.<namespace>.svc of the Service the APIService points to.")
	authentication := fss.FlagSet("authentication")
	ro.Authentication.AddFlags(authentication)
	authentication.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth,
		"Serve requests without credentials on every path as system:anonymous, to be authorized like any user. "+
			"When false, only the paths of --anonymous-auth-paths are served so; other requests without credentials get 401 Unauthorized. "+
			"A client certificate the server does not trust gets 401 Unauthorized either way.")
	authentication.StringSliceVar(&o.AnonymousAuthPaths, "anonymous-auth-paths", o.AnonymousAuthPaths,
		"Paths, matched exactly, on which requests without credentials are served as system:anonymous when --anonymous-auth is false. "+
			"Authorization still applies (see --authorization-always-allow-paths). Empty refuses anonymous requests everywhere.")
	authorization := fss.FlagSet("authorization")
	ro.Authorization.AddFlags(authorization)
	o.AuthorizationClient.AddFlags(authorization)
	ro.CoreAPI.AddFlags(fss.FlagSet("cluster"))
	ro.Admission.AddFlags(fss.FlagSet("admission"))
	ro.Audit.AddFlags(fss.FlagSet("auditing"))
	ro.Features.AddFlags(fss.FlagSet("features"))
	ro.EgressSelector.AddFlags(fss.FlagSet("egress selector"))
	ro.Traces.AddFlags(fss.FlagSet("traces"))
	o.Controller.AddFlags(fss.FlagSet("controllers"))
	o.Bridge.AddFlags(fss.FlagSet("eviction bridge"))
	o.Metrics.AddFlags(fss.FlagSet("metrics"))
	logsapi.AddFlags(o.Logs, fss.FlagSet("logs"))
	return fss
}

// Complete fills in what the flags leave open: the embedded etcd when no
// --etcd-servers is given.
func (o *Options) Complete() error {
	o.Controller.Complete()
	o.Bridge.Enabled = o.Controller.Controllers.Enabled(bridge.Name)
	transport := &o.RecommendedOptions.Etcd.StorageConfig.Transport
	clientURL, err := o.EmbeddedEtcd.Complete(transport.ServerList, o.RecommendedOptions.SecureServing.BindPort)
	if err != nil {
		return err
	}
	if clientURL != "" {
		transport.ServerList = []string{clientURL}
	}
	if authz := o.RecommendedOptions.Authorization; authz != nil {
		authz.AlwaysAllowPaths = append(authz.AlwaysAllowPaths, bridgePaths(o.Bridge)...)
	}
	return nil
}

// Validate checks the options after Complete.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.RecommendedOptions.Validate()...)
	errs = append(errs, o.EmbeddedEtcd.Validate()...)
	errs = append(errs, o.AuthorizationClient.Validate()...)
	errs = append(errs, o.Controller.Validate()...)
	errs = append(errs, o.Bridge.Validate()...)
	controllers := o.Controller.Controllers.Enabled(coordinationcontroller.ControllerName)
	errs = append(errs, o.ServingCertificate.Validate(controllers)...)
	if o.Bridge.Enabled && !controllers {
		// The bridge's caBundle keeper and janitor run among the
		// controllers, on their leader: without them nothing would keep
		// the webhook's caBundle, and nothing would say so.
		errs = append(errs, fmt.Errorf("--controllers names %s without %s: the bridge's webhook caBundle is kept by the controllers' leader", bridge.Name, coordinationcontroller.ControllerName))
	}
	errs = append(errs, o.ComponentGlobalsRegistry.Validate()...)
	errs = append(errs, o.Metrics.Validate()...)
	for _, path := range o.AnonymousAuthPaths {
		if !strings.HasPrefix(path, "/") {
			errs = append(errs, fmt.Errorf("--anonymous-auth-paths: %q must start with /", path))
		}
	}
	if o.ShutdownWatchTerminationGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-watch-termination-grace-period must not be negative, got %s", o.ShutdownWatchTerminationGracePeriod))
	}
	return utilerrors.NewAggregate(errs)
}
