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
	"fmt"
	"net"
	"time"

	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	basecompatibility "k8s.io/component-base/compatibility"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	netutils "k8s.io/utils/net"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/apiserver/authentication"
	generatedopenapi "github.com/evictionrequest/apiserver/pkg/generated/openapi"
	"github.com/evictionrequest/apiserver/pkg/util/servingcert"
)

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
		StorageSerializer: internalscheme.Codecs,
		StorageVersion:    v1alpha1.SchemeGroupVersion,
		MemoryVersion:     coordination.SchemeGroupVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("--storage-media-type: %w", err)
	}
	o.RecommendedOptions.Etcd.StorageConfig.Codec = storageCodec

	serverConfig := genericapiserver.NewRecommendedConfig(internalscheme.Codecs)
	namer := openapi.NewDefinitionNamer(internalscheme.Scheme)
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIConfig.Info.Title = "EvictionRequest"
	serverConfig.OpenAPIConfig.Info.Version = v1alpha1.SchemeGroupVersion.Version
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIV3Config.Info.Title = "EvictionRequest"
	serverConfig.OpenAPIV3Config.Info.Version = v1alpha1.SchemeGroupVersion.Version
	serverConfig.FeatureGate = o.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	serverConfig.EffectiveVersion = o.ComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent)
	serverConfig.ShutdownWatchTerminationGracePeriod = o.ShutdownWatchTerminationGracePeriod

	if err := o.applyRecommended(serverConfig); err != nil {
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
		if err := factory.Core().V1().Pods().Informer().SetTransform(trimPod); err != nil {
			return nil, err
		}
	}
	config := &apiserver.Config{GenericConfig: serverConfig}
	if err := o.Controller.ApplyTo(config); err != nil {
		return nil, err
	}
	if err := applyBridge(o.Bridge, config, o.Controller, o.RecommendedOptions.SecureServing.ServerCert.CertKey.CertFile); err != nil {
		return nil, err
	}
	if err := applyServingCertificate(o.ServingCertificate, o.Bridge, config, o.Controller); err != nil {
		return nil, err
	}
	return config, nil
}

// applyRecommended applies RecommendedOptions step by step, in the order
// of its ApplyTo, as kube-apiserver builds its configuration: the authorizer
// the server and admission's pod-delete check share (one cache, one rate
// limit) is applyAuthorization's, whose review client has
// AuthorizationClient's limits.
func (o *Options) applyRecommended(c *genericapiserver.RecommendedConfig) error {
	ro := o.RecommendedOptions
	if err := ro.Etcd.ApplyTo(&c.Config); err != nil {
		return err
	}
	if err := ro.EgressSelector.ApplyTo(&c.Config); err != nil {
		return err
	}
	if err := ro.Traces.ApplyTo(c.EgressSelector, &c.Config); err != nil {
		return err
	}
	if err := ro.SecureServing.ApplyToConfig(&c.Config); err != nil {
		return err
	}
	servingcert.Register(servingcert.APIServer, c.SecureServing.Cert)
	if err := ro.Authentication.ApplyTo(&c.Authentication, c.SecureServing, c.OpenAPIConfig); err != nil {
		return err
	}
	if err := o.applyAuthorization(c); err != nil {
		return err
	}
	if err := ro.Audit.ApplyTo(&c.Config); err != nil {
		return err
	}
	if err := ro.CoreAPI.ApplyTo(c); err != nil {
		return err
	}
	var kubeClient kubernetes.Interface
	var dynamicClient dynamic.Interface
	if c.ClientConfig != nil {
		var err error
		if kubeClient, err = kubernetes.NewForConfig(c.ClientConfig); err != nil {
			return err
		}
		if dynamicClient, err = dynamic.NewForConfig(c.ClientConfig); err != nil {
			return err
		}
	}
	if err := ro.Features.ApplyTo(&c.Config, kubeClient, c.SharedInformerFactory); err != nil {
		return err
	}
	return ro.Admission.ApplyTo(&c.Config, c.SharedInformerFactory, kubeClient, dynamicClient, ro.FeatureGate, c.EffectiveVersion, quotaInitializer{})
}

// applyAuthorization sets the authorizer: delegated authorization's, with
// a review client of AuthorizationClient's limits (k8s.io/apiserver fixes
// its own at 200 QPS); the library's when it would run without a
// kubeconfig.
func (o *Options) applyAuthorization(c *genericapiserver.RecommendedConfig) error {
	authz, err := o.AuthorizationClient.NewAuthorizer(o.RecommendedOptions.Authorization)
	if err != nil {
		return err
	}
	if authz == nil {
		return o.RecommendedOptions.Authorization.ApplyTo(&c.Authorization)
	}
	c.Authorization.Authorizer = authz
	return nil
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
