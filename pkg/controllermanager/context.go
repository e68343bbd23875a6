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
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
)

// Context is what the controllers of one leadership term are built from, as
// kube-controller-manager's ControllerContext: the clients, the informers
// and the clock.
type Context struct {
	// Client reaches kube-apiserver. EventClient records events: a client
	// of its own is a rate limiter of its own, so that events never delay
	// an eviction.
	Client, EventClient kubernetes.Interface
	// EvictionRequests reaches coordination.k8s.io/v1alpha1; nil in a
	// manager that was given none.
	EvictionRequests versioned.Interface
	// Informers inform of kube-apiserver's APIs: the term's own, or the
	// process's when the manager shares them (Manager.SharedInformers).
	Informers informers.SharedInformerFactory
	// EvictionRequestInformers are the term's informers of
	// coordination.k8s.io/v1alpha1; nil without EvictionRequests.
	EvictionRequestInformers externalversions.SharedInformerFactory
	// Clock is the controllers' notion of time; tests replace it.
	Clock clock.WithTicker
}
