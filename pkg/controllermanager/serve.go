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

package controllermanager

import (
	"context"
	"fmt"
	"net/http"
	"time"

	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// metricsShutdownTimeout bounds how long the metrics server waits for the
// scrapes in flight when the process stops.
const metricsShutdownTimeout = 5 * time.Second

// MetricsServer is where and to whom a process that is not an API server
// serves /metrics, /healthz and /readyz, as kube-controller-manager serves
// them on its secure port: over TLS, /metrics to the callers
// Authentication authenticates and Authorization authorizes (delegated to
// kube-apiserver: a TokenReview or a client certificate of its client CA,
// then a SubjectAccessReview of `get` on the non-resource URL /metrics),
// the health checks to anyone (the authorizer's always-allowed paths).
type MetricsServer struct {
	Serving        *server.SecureServingInfo
	Authentication server.AuthenticationInfo
	Authorization  server.AuthorizationInfo
}

// Serve serves /metrics, /healthz (with health checks) and /readyz (with
// ready checks) on s until the returned function is called; a nil s serves
// nothing. The managers of commands that are not API servers serve
// --metrics-bind-address with it.
func Serve(ctx context.Context, s *MetricsServer, health, ready []healthz.HealthChecker) (stop func(), err error) {
	if s == nil {
		return func() {}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	healthz.InstallHandler(mux, append([]healthz.HealthChecker{healthz.PingHealthz}, health...)...)
	healthz.InstallReadyzHandler(mux, append([]healthz.HealthChecker{healthz.PingHealthz, s.clientCALoaded()}, ready...)...)
	stopCh := make(chan struct{})
	stopped, _, err := s.Serving.Serve(s.handlerChain(mux), metricsShutdownTimeout, stopCh)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	klog.FromContext(ctx).Info("Serving /metrics, /healthz and /readyz", "address", s.Serving.Listener.Addr().String())
	return func() {
		close(stopCh)
		<-stopped
	}, nil
}

// clientCALoaded keeps the process out of /readyz until its delegated
// authentication knows the client CAs: until then a scraper's client
// certificate is not asked for.
func (s *MetricsServer) clientCALoaded() healthz.HealthChecker {
	var requestHeaderCA dynamiccertificates.CAContentProvider
	if rh := s.Authentication.RequestHeaderConfig; rh != nil {
		requestHeaderCA = rh.CAContentProvider
	}
	return ClientCAReadyCheck(s.Serving.ClientCA, requestHeaderCA)
}

// handlerChain puts handler behind the filters kube-controller-manager's
// secure port has: authorization, then authentication, in front of them
// the request's attributes, no caching, logging and panic recovery.
func (s *MetricsServer) handlerChain(handler http.Handler) http.Handler {
	requestInfoResolver := &apirequest.RequestInfoFactory{}
	handler = genericapifilters.WithAuthorization(handler, s.Authorization.Authorizer, scheme.Codecs)
	handler = genericapifilters.WithAuthentication(handler, s.Authentication.Authenticator, genericapifilters.Unauthorized(scheme.Codecs), nil, nil)
	handler = genericapifilters.WithRequestInfo(handler, requestInfoResolver)
	handler = genericapifilters.WithCacheControl(handler)
	handler = genericfilters.WithHTTPLogging(handler)
	return genericfilters.WithPanicRecovery(handler, requestInfoResolver)
}
