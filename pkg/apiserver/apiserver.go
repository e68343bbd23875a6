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

// Package apiserver assembles the generic API server that serves
// EvictionRequests.
package apiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	evictionrequeststorage "github.com/evictionrequest/apiserver/pkg/registry/coordination/evictionrequest/storage"
)

// ExtraConfig holds what the EvictionRequest server needs beyond a generic
// API server.
type ExtraConfig struct {
	// Clock is the server's notion of time, for the status rules and the
	// in-process controllers alike; tests replace it.
	Clock clock.WithTicker
	// Controllers, when set, run in the server process while it holds
	// their Lease: the eviction request controller and the node drain.
	Controllers *controllermanager.Manager
	// EvictionBridge, when set, is the eviction API bridge's webhook,
	// served on every replica.
	EvictionBridge *EvictionBridge
}

// Config is the configuration of the EvictionRequest API server.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	ExtraConfig   ExtraConfig
}

// CompletedConfig is a Config whose defaults have been filled in; only a
// completed config can build a server.
type CompletedConfig struct {
	*completedConfig
}

type completedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	ExtraConfig   *ExtraConfig
}

// EvictionRequestServer serves coordination.k8s.io/v1alpha1 EvictionRequests.
type EvictionRequestServer struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// Complete fills in the defaults of the configuration.
func (cfg *Config) Complete() CompletedConfig {
	if cfg.ExtraConfig.Clock == nil {
		cfg.ExtraConfig.Clock = clock.RealClock{}
	}
	return CompletedConfig{&completedConfig{
		GenericConfig: cfg.GenericConfig.Complete(),
		ExtraConfig:   &cfg.ExtraConfig,
	}}
}

// New returns a server that serves the evictionrequests resource and its
// status subresource from etcd.
func (c completedConfig) New() (*EvictionRequestServer, error) {
	genericServer, err := c.GenericConfig.New("evictionrequest-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	var clientCA, requestHeaderCA dynamiccertificates.CAContentProvider
	if c.GenericConfig.SecureServing != nil {
		clientCA = c.GenericConfig.SecureServing.ClientCA
	}
	if rh := c.GenericConfig.Authentication.RequestHeaderConfig; rh != nil {
		requestHeaderCA = rh.CAContentProvider
	}
	if err := genericServer.AddReadyzChecks(controllermanager.ClientCAReadyCheck(clientCA, requestHeaderCA)); err != nil {
		return nil, err
	}
	evictionRequests, evictionRequestStatus, err := evictionrequeststorage.NewREST(Scheme, c.GenericConfig.RESTOptionsGetter, c.ExtraConfig.Clock)
	if err != nil {
		return nil, fmt.Errorf("creating the storage of evictionrequests: %w", err)
	}

	apiGroupInfo := genericapiserver.NewDefaultAPIGroupInfo(coordination.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	apiGroupInfo.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"evictionrequests":        evictionRequests,
		"evictionrequests/status": evictionRequestStatus,
	}
	if err := genericServer.InstallAPIGroup(&apiGroupInfo); err != nil {
		return nil, fmt.Errorf("installing %s: %w", v1alpha1.SchemeGroupVersion, err)
	}
	server := &EvictionRequestServer{GenericAPIServer: genericServer}
	if b := c.ExtraConfig.EvictionBridge; b != nil {
		if err := server.installEvictionBridge(b); err != nil {
			return nil, fmt.Errorf("installing the eviction API bridge: %w", err)
		}
	}
	if c.ExtraConfig.Controllers != nil {
		if err := server.installControllers(c); err != nil {
			return nil, fmt.Errorf("installing the controllers: %w", err)
		}
	}
	return server, nil
}
