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
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// Serve serves /metrics, /healthz (with health checks) and /readyz (with
// ready checks) on address until the returned function is called; "" or
// "0" serves nothing. The managers of commands that are not API servers
// serve --metrics-bind-address with it.
func Serve(ctx context.Context, address string, health, ready []healthz.HealthChecker) (stop func(), err error) {
	if address == "" || address == "0" {
		return func() {}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	healthz.InstallHandler(mux, append([]healthz.HealthChecker{healthz.PingHealthz}, health...)...)
	healthz.InstallReadyzHandler(mux, append([]healthz.HealthChecker{healthz.PingHealthz}, ready...)...)
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Serving /metrics")
		}
	}()
	klog.FromContext(ctx).Info("Serving /metrics, /healthz and /readyz", "address", listener.Addr().String())
	return func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdownCtx)
	}, nil
}
