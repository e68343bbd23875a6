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

// Package registrytest gives storage tests REST options on a real etcd.
package registrytest

import (
	"testing"

	"k8s.io/apiserver/pkg/registry/generic"
	etcd3testing "k8s.io/apiserver/pkg/storage/etcd3/testing"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// NewRESTOptions returns the options of a store that keeps EvictionRequests,
// encoded as v1alpha1 like the server does, in the etcd at serverURLs.
func NewRESTOptions(serverURLs []string) generic.RESTOptions {
	config := storagebackend.NewDefaultConfig("/registry/coordination.k8s.io", internalscheme.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion))
	config.Transport.ServerList = serverURLs
	return generic.RESTOptions{
		StorageConfig:           config.ForResource(coordination.Resource("evictionrequests")),
		Decorator:               generic.UndecoratedStorage,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          "evictionrequests",
	}
}

// NewEtcdRESTOptions starts an embedded etcd on free loopback ports for the
// duration of the test and returns REST options that store in it.
func NewEtcdRESTOptions(t testing.TB) generic.RESTOptions {
	t.Helper()
	_, config := etcd3testing.NewUnsecuredEtcd3TestClientServer(t)
	return NewRESTOptions(config.Transport.ServerList)
}
