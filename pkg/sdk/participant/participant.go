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

// Package participant is one way to take part in evictions on whichever
// EvictionRequest API a cluster serves: a Participant requests, withdraws,
// waits for and reads the eviction of pods under one name, implemented once
// for coordination.k8s.io/v1alpha1 (one EvictionRequest per pod, where the
// participant lists itself among the requesters) and once for Kubernetes
// 1.37's lifecycle.k8s.io/v1alpha1 (an EvictionRequest of the participant's
// own per pod, and the pod's Eviction). The kubectl plugin, the node drain,
// the surge interceptor and programs that do not care which API they speak
// hold one Participant, as kubectl's drain command holds a drain.Helper.
package participant

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// Participant takes part in the eviction of pods under one name, on one
// EvictionRequest API.
type Participant interface {
	// API is the API it speaks.
	API() evictionapi.API
	// Name is its name: a requester's on coordination.k8s.io (a DNS
	// subdomain), a domain-prefixed key on lifecycle.k8s.io.
	Name() string
	// Request asks for the eviction of pod and returns where it stands as
	// written. annotations, if any, are set in the same write: a request
	// it creates carries them from the start. They are the participant's
	// own: a later Request without one of them removes it.
	Request(ctx context.Context, pod *corev1.Pod, annotations map[string]string) (Status, error)
	// Withdraw withdraws the participant from the eviction of the pod with
	// uid in namespace.
	Withdraw(ctx context.Context, namespace string, uid types.UID) (Withdrawal, error)
	// Wait waits for the outcome of the eviction of pod.
	Wait(ctx context.Context, pod *corev1.Pod) (requester.Result, error)
	// Status reads where the eviction of the pod with uid in namespace
	// stands: from the informers of Inform once it was called, else from
	// kube-apiserver.
	Status(ctx context.Context, namespace string, uid types.UID) (Status, error)
	// Annotate merges annotations into the metadata of the participant's
	// request for the pod with uid (a nil value removes one); the request
	// must exist.
	Annotate(ctx context.Context, namespace string, uid types.UID, annotations map[string]*string) error
	// Inform makes Status read from informers of factories, which the
	// caller starts, and returns those informers: their changes are the
	// changes of the participant's evictions (Target names the pod of each
	// object). Call it once, before the factories start.
	Inform(factories Informers) ([]cache.SharedIndexInformer, error)
}

// Informers are the informer factories a Participant may read from: Kube
// for lifecycle.k8s.io, EvictionRequests for coordination.k8s.io.
type Informers struct {
	Kube             informers.SharedInformerFactory
	EvictionRequests externalversions.SharedInformerFactory
}

// New returns the participant name on api (not Auto), with the clients of
// its API: kube for both, and evictionRequests for coordination.k8s.io.
func New(api evictionapi.API, name string, kube kubernetes.Interface, evictionRequests versioned.Interface, opts requester.Options) (Participant, error) {
	switch api {
	case evictionapi.Coordination:
		r, err := requester.New(name, evictionRequests, kube.CoreV1(), opts)
		if err != nil {
			return nil, err
		}
		return &coordination{requester: r, client: evictionRequests}, nil
	case evictionapi.Lifecycle:
		r, err := requester.NewLifecycle(name, kube, opts)
		if err != nil {
			return nil, err
		}
		return &lifecycle{requester: r, client: kube, callTimeout: r.CallTimeout()}, nil
	}
	return nil, fmt.Errorf("participant %s: no EvictionRequest API chosen (got %q)", name, api)
}

// NewForConfig returns the participant name on api, or on the API the
// cluster of config serves when api is evictionapi.Auto. config sets the
// client's QPS and burst: a drain writes a request per pod.
func NewForConfig(name string, config *rest.Config, api evictionapi.API, opts requester.Options) (Participant, error) {
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	if api, err = evictionapi.Discover(kube.Discovery(), api); err != nil {
		return nil, err
	}
	var evictionRequests versioned.Interface
	if api == evictionapi.Coordination {
		if evictionRequests, err = versioned.NewForConfig(config); err != nil {
			return nil, err
		}
	}
	return New(api, name, kube, evictionRequests, opts)
}

// annotationsPatch is the merge patch of annotations (nil removes one).
func annotationsPatch(annotations map[string]*string) []byte {
	// A map of strings and nils always marshals.
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	return patch
}
