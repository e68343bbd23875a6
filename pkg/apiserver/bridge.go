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

package apiserver

import (
	"context"
	"net/http"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
)

// EvictionBridge is the eviction API bridge as the server serves it: a
// webhook at Path, ready once Ready passes, which Start starts.
type EvictionBridge struct {
	Path    string
	Handler http.Handler
	Ready   healthz.HealthChecker
	Start   func(ctx context.Context)
}

// installEvictionBridge serves the bridge's webhook on the secure port of
// every replica, keeps the replica out of /readyz until the bridge's
// caches synced, and starts them after the server.
func (s *EvictionRequestServer) installEvictionBridge(b *EvictionBridge) error {
	s.GenericAPIServer.Handler.NonGoRestfulMux.Handle(b.Path, b.Handler)
	if err := s.GenericAPIServer.AddReadyzChecks(b.Ready); err != nil {
		return err
	}
	return s.GenericAPIServer.AddPostStartHook("start-eviction-bridge", func(ctx genericapiserver.PostStartHookContext) error {
		b.Start(ctx)
		return nil
	})
}
