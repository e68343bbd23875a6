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

package requester

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// Any is a requester on whichever EvictionRequest API the cluster serves:
// exactly one of Coordination and Lifecycle is set. A program that does
// not care which API it speaks uses Request, Withdraw and Wait; one that
// reads the requests uses the requester of its API.
type Any struct {
	Coordination *Requester
	Lifecycle    *Lifecycle
}

// NewForConfig returns the requester name on api, or on the API the
// cluster of config serves when api is evictionapi.Auto. name must suit
// the API: a DNS subdomain (descheduler.acme.io) on coordination.k8s.io, a
// domain-prefixed key (acme.io/descheduler) on lifecycle.k8s.io.
func NewForConfig(name string, config *rest.Config, api evictionapi.API, opts Options) (*Any, error) {
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	if api, err = evictionapi.Discover(kube.Discovery(), api); err != nil {
		return nil, err
	}
	if api == evictionapi.Lifecycle {
		l, err := NewLifecycle(name, kube, opts)
		return &Any{Lifecycle: l}, err
	}
	client, err := versioned.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	r, err := New(name, client, kube.CoreV1(), opts)
	return &Any{Coordination: r}, err
}

// API is the API the requester speaks.
func (a *Any) API() evictionapi.API {
	if a.Lifecycle != nil {
		return evictionapi.Lifecycle
	}
	return evictionapi.Coordination
}

// Name is the requester's name.
func (a *Any) Name() string {
	if a.Lifecycle != nil {
		return a.Lifecycle.Name()
	}
	return a.Coordination.Name()
}

// Request asks for the eviction of pod.
func (a *Any) Request(ctx context.Context, pod *corev1.Pod) error {
	var err error
	if a.Lifecycle != nil {
		_, err = a.Lifecycle.Request(ctx, pod)
	} else {
		_, err = a.Coordination.Request(ctx, pod)
	}
	return err
}

// Withdraw withdraws the requester from the eviction of the pod with uid.
func (a *Any) Withdraw(ctx context.Context, namespace string, uid types.UID) error {
	var err error
	if a.Lifecycle != nil {
		_, err = a.Lifecycle.Withdraw(ctx, namespace, uid)
	} else {
		_, err = a.Coordination.Withdraw(ctx, namespace, uid)
	}
	return err
}

// Wait waits for the outcome of the eviction of pod.
func (a *Any) Wait(ctx context.Context, pod *corev1.Pod) (Result, error) {
	if a.Lifecycle != nil {
		return a.Lifecycle.Wait(ctx, pod)
	}
	return a.Coordination.Wait(ctx, pod)
}
