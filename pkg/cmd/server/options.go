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

// Package server holds the options and the command of
// evictionrequest-apiserver, in the Complete, Validate, Config, Run flow of
// Kubernetes API servers.
package server

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	cliflag "k8s.io/component-base/cli/flag"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/features"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	netutils "k8s.io/utils/net"

	evictionrequestadmission "github.com/evictionrequest/apiserver/pkg/admission/plugin/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/apiserver/authentication"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	generatedopenapi "github.com/evictionrequest/apiserver/pkg/generated/openapi"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
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

func init() {
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
	// The watch cache's snapshots (one per write, copy-on-write) serve LISTs
	// at an older resourceVersion and the pages after the first from the
	// cache. Every EvictionRequest is written twice in a moment (created,
	// then its interceptor selected), and the node copies of those
	// snapshots stay until the watch history fills: make bench-system
	// measured 8.2 KiB of heap per request held with them, 5.4 KiB without.
	// Without them such LISTs read the server's own etcd, as before
	// Kubernetes 1.34; --feature-gates=ListFromCacheSnapshot=true turns
	// them back on.
	utilruntime.Must(utilfeature.DefaultMutableFeatureGate.OverrideDefault(features.ListFromCacheSnapshot, false))
}

// Options are the command-line options of evictionrequest-apiserver.
type Options struct {
	RecommendedOptions *genericoptions.RecommendedOptions
	EmbeddedEtcd       *EmbeddedEtcdOptions
	// AuthorizationClient limits the delegated authorizer's reviews.
	AuthorizationClient *AuthorizationClientOptions
	Controller          *ControllerOptions
	Logs                *logsapi.LoggingConfiguration
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
	o := &Options{
		RecommendedOptions: genericoptions.NewRecommendedOptions(
			defaultEtcdPathPrefix,
			apiserver.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion),
		),
		EmbeddedEtcd:                        NewEmbeddedEtcdOptions(),
		AuthorizationClient:                 NewAuthorizationClientOptions(),
		Controller:                          NewControllerOptions(),
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
	o.RecommendedOptions.ExtraAdmissionInitializers = o.limitAuthorizationClient
	// The EvictionRequest plugin runs after the generic plugins, enabled by
	// default; --disable-admission-plugins=EvictionRequest turns it off.
	evictionrequestadmission.Register(o.RecommendedOptions.Admission.Plugins)
	o.RecommendedOptions.Admission.RecommendedPluginOrder = append(o.RecommendedOptions.Admission.RecommendedPluginOrder, evictionrequestadmission.PluginName)
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
	o.Metrics.AddFlags(fss.FlagSet("metrics"))
	logsapi.AddFlags(o.Logs, fss.FlagSet("logs"))
	return fss
}

// Complete fills in what the flags leave open: the embedded etcd when no
// --etcd-servers is given.
func (o *Options) Complete() error {
	transport := &o.RecommendedOptions.Etcd.StorageConfig.Transport
	clientURL, err := o.EmbeddedEtcd.Complete(transport.ServerList, o.RecommendedOptions.SecureServing.BindPort)
	if err != nil {
		return err
	}
	if clientURL != "" {
		transport.ServerList = []string{clientURL}
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

// Config builds the server configuration from the options.
func (o *Options) Config() (*apiserver.Config, error) {
	if err := o.RecommendedOptions.SecureServing.MaybeDefaultWithSelfSignedCerts(
		"localhost", o.SelfSignedCertHosts, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating self-signed certificates: %w", err)
	}

	// RecommendedOptions stores with the codec it was given, whatever
	// --storage-media-type says; kube-apiserver's storage factory builds
	// the codec from the media type, and so does this.
	storageCodec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  o.RecommendedOptions.Etcd.DefaultStorageMediaType,
		StorageSerializer: apiserver.Codecs,
		StorageVersion:    v1alpha1.SchemeGroupVersion,
		MemoryVersion:     coordination.SchemeGroupVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("--storage-media-type: %w", err)
	}
	o.RecommendedOptions.Etcd.StorageConfig.Codec = storageCodec

	serverConfig := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	namer := openapi.NewDefinitionNamer(apiserver.Scheme)
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIConfig.Info.Title = "EvictionRequest"
	serverConfig.OpenAPIConfig.Info.Version = v1alpha1.SchemeGroupVersion.Version
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIV3Config.Info.Title = "EvictionRequest"
	serverConfig.OpenAPIV3Config.Info.Version = v1alpha1.SchemeGroupVersion.Version
	serverConfig.FeatureGate = o.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	serverConfig.EffectiveVersion = o.ComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent)
	serverConfig.ShutdownWatchTerminationGracePeriod = o.ShutdownWatchTerminationGracePeriod

	if err := o.RecommendedOptions.ApplyTo(serverConfig); err != nil {
		return nil, err
	}
	if rh := serverConfig.Authentication.RequestHeaderConfig; rh != nil && serverConfig.Authentication.Authenticator != nil {
		// Requests through the aggregator are authenticated with the
		// verification of its certificate remembered; anything else,
		// and what it refuses, goes to the authenticator ApplyTo built.
		serverConfig.Authentication.Authenticator = union.New(
			group.NewAuthenticatedGroupAdder(authentication.NewFrontProxyAuthenticator(rh, clock.RealClock{})),
			serverConfig.Authentication.Authenticator)
	}
	if !o.AnonymousAuth && serverConfig.Authentication.Authenticator != nil {
		serverConfig.Authentication.Authenticator = authentication.AnonymousOnlyOn(serverConfig.Authentication.Authenticator, o.AnonymousAuthPaths)
	}
	if factory := serverConfig.SharedInformerFactory; factory != nil {
		// Every pod of the cluster is cached for admission and the
		// controller, which read a few of its fields.
		if err := cachetransform.TrimPods(factory); err != nil {
			return nil, err
		}
	}
	config := &apiserver.Config{GenericConfig: serverConfig}
	if err := o.Controller.ApplyTo(config); err != nil {
		return nil, err
	}
	return config, nil
}

// limitAuthorizationClient replaces the authorizer RecommendedOptions
// built, whose review client has fixed limits, with one whose client has
// AuthorizationClient's. RecommendedOptions.ApplyTo calls it, as its
// ExtraAdmissionInitializers, after it built the authorizer and before it
// gives the authorizer to the admission plugins: the server and admission's
// pod-delete check share one authorizer, one cache and one rate limit.
func (o *Options) limitAuthorizationClient(c *genericapiserver.RecommendedConfig) ([]admission.PluginInitializer, error) {
	authz, err := o.AuthorizationClient.NewAuthorizer(o.RecommendedOptions.Authorization)
	if err != nil {
		return nil, err
	}
	if authz != nil {
		c.Authorization.Authorizer = authz
	}
	return nil, nil
}

// httpShutdownGrace is how long the HTTP server's shutdown waits, after the
// watches' grace period, for its connections to close: a GOAWAY round trip,
// as kube-apiserver's --shutdown-send-retry-after mode allows.
const httpShutdownGrace = 2 * time.Second

// httpShutdownTimeout bounds the HTTP server's shutdown, which
// k8s.io/apiserver bounds by the request timeout (a minute). The requests
// in flight do not need it: the server waits for them on its own before it
// returns. What it waits for is every connection to close, and an HTTP/2
// connection whose TLS handshake ended just after the shutdown began is
// never sent a GOAWAY (golang.org/x/net/http2 registers it too late), so its
// client, kube-apiserver, keeps it open: a replica stopped right after it
// started waited the whole minute.
func httpShutdownTimeout(watchGracePeriod time.Duration) time.Duration {
	return max(watchGracePeriod, 0) + httpShutdownGrace
}

// Run applies the process-wide logging and metrics options, then serves as
// RunServer does.
func (o *Options) Run(ctx context.Context) error {
	if err := logsapi.ValidateAndApply(o.Logs, o.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)); err != nil {
		return err
	}
	o.Metrics.Apply()
	return o.RunServer(ctx)
}

// RunServer starts the embedded etcd when configured, then serves until ctx
// is canceled; it stops the server before the etcd it stores in. It leaves
// the process's logging and metrics alone, so that tests may run several
// servers in one process.
func (o *Options) RunServer(ctx context.Context) error {
	stopEtcd, err := o.EmbeddedEtcd.Start(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped while the etcd started: what was asked, not a failure.
			return nil
		}
		return err
	}
	defer stopEtcd()

	config, err := o.Config()
	if err != nil {
		return err
	}
	server, err := config.Complete().New()
	if err != nil {
		return err
	}
	server.GenericAPIServer.ShutdownTimeout = httpShutdownTimeout(o.ShutdownWatchTerminationGracePeriod)
	klog.FromContext(ctx).Info("Starting evictionrequest-apiserver")
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}
