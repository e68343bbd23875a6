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

package interceptor

import (
	"context"
	"errors"
	"fmt"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

// Reasons of the events an interceptor records on EvictionRequests.
const (
	// EventStarted: the interceptor took the request and started working.
	EventStarted = "InterceptorStarted"
	// EventCompleted: the interceptor did its part and passed the request on.
	EventCompleted = "InterceptorCompleted"
	// EventDeclined: the interceptor does not handle the pod and passed the
	// request on.
	EventDeclined = "InterceptorDeclined"
	// EventPodTerminated: the interceptor terminated the pod and waits for
	// it to be gone.
	EventPodTerminated = "InterceptorTerminatedPod"
	// EventFailed: the Handler failed; it runs again with backoff.
	EventFailed = "InterceptorFailed"
)

// Config configures an interceptor.
type Config struct {
	// Name is the interceptor's name, as pods list it in their
	// evictionrequest.coordination.k8s.io/interceptors annotation (a DNS
	// subdomain) or, on lifecycle.k8s.io, in spec.evictionResponders (a
	// domain-prefixed key outside k8s.io and kubernetes.io).
	Name string
	// Handler does the work.
	Handler Handler
	// API is the EvictionRequest API to answer on; Auto (the zero value)
	// discovers it with KubeClient, preferring coordination.k8s.io.
	API evictionapi.API
	// Client reaches coordination.k8s.io (through kube-apiserver); only
	// that API needs it.
	Client versioned.Interface
	// KubeClient records events and, with LeaderElection, holds the Lease.
	KubeClient kubernetes.Interface
	// Namespace limits the interceptor to one namespace; empty is all.
	Namespace string
	// HeartbeatPeriod is how often the interceptor heartbeats while it
	// holds a request. Zero is a tenth of the heartbeat deadline (the
	// request's spec.heartbeatDeadlineSeconds, or lifecycle.k8s.io's 20
	// minutes); more than half of it is cut to half, and on
	// lifecycle.k8s.io less than 20 seconds is raised to 20 seconds.
	HeartbeatPeriod time.Duration
	// CallTimeout bounds every API call; evictionapi.DefaultCallTimeout when zero.
	CallTimeout time.Duration
	// Workers is the number of requests looked at in parallel (Handlers
	// run in goroutines of their own); 2 when zero.
	Workers int
	// LeaderElection, when set, runs the interceptor only while it holds
	// this Lease, so that several replicas are safe.
	LeaderElection *leaderelect.Config
	// Clock is the interceptor's notion of time; the real clock when nil.
	Clock clock.WithTicker
}

// Interceptor answers the EvictionRequests whose active interceptor is its name.
type Interceptor struct {
	cfg Config
}

// New checks cfg and returns an interceptor.
func New(cfg Config) (*Interceptor, error) {
	var errs []error
	if err := cfg.API.ValidateName(cfg.Name); err != nil {
		errs = append(errs, fmt.Errorf("name %q: %w", cfg.Name, err))
	}
	if cfg.Handler == nil {
		errs = append(errs, errors.New("a Handler is required"))
	}
	if cfg.KubeClient == nil || (cfg.Client == nil && cfg.API == evictionapi.Coordination) {
		errs = append(errs, errors.New("the KubeClient option is required, and the Client option on coordination.k8s.io"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = evictionapi.DefaultCallTimeout
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Interceptor{cfg: cfg}, nil
}

// Run answers EvictionRequests until ctx ends, then cancels the Handlers
// and waits for them. With leader election it acts only while it leads.
func (i *Interceptor) Run(ctx context.Context) error {
	ctx = klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), "interceptor", i.cfg.Name))
	runTerm, err := i.speak()
	if err != nil {
		return err
	}
	if i.cfg.LeaderElection == nil {
		return runTerm(ctx)
	}
	return leaderelect.Run(ctx, i.cfg.KubeClient.CoordinationV1(), *i.cfg.LeaderElection, func(ctx context.Context) {
		if err := runTerm(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Interceptor term failed")
		}
	})
}

// speak discovers the API unless the configuration names it, and returns
// how one term runs on it.
func (i *Interceptor) speak() (func(context.Context) error, error) {
	chosen, err := evictionapi.Discover(i.cfg.KubeClient.Discovery(), i.cfg.API)
	if err != nil {
		return nil, err
	}
	if err := chosen.ValidateName(i.cfg.Name); err != nil {
		return nil, fmt.Errorf("name %q on %s: %w", i.cfg.Name, chosen, err)
	}
	cfg := i.cfg
	if chosen == evictionapi.Lifecycle {
		a := lifecycleAPI{name: cfg.Name, namespace: cfg.Namespace, client: cfg.KubeClient}
		return func(ctx context.Context) error { return runTerm[*lifecyclev1alpha1.Eviction](ctx, cfg, a) }, nil
	}
	if cfg.Client == nil {
		return nil, errors.New("coordination.k8s.io needs the Client option")
	}
	a := coordinationAPI{name: cfg.Name, namespace: cfg.Namespace, client: cfg.Client}
	return func(ctx context.Context) error { return runTerm[*v1alpha1.EvictionRequest](ctx, cfg, a) }, nil
}
