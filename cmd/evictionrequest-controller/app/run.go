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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/pkg/cmd/assembly"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/stepaside"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	"github.com/evictionrequest/apiserver/pkg/version"
)

// componentName names evictionrequest-controller in logs and user agents.
const componentName = "evictionrequest-controller"

// Run runs the controllers until ctx ends: while this process holds the
// Lease, or at once when leader election is off.
func (o *Options) Run(ctx context.Context) error {
	if err := logsapi.ValidateAndApply(o.Logs, nil); err != nil {
		return err
	}
	config, err := o.Client.Config(o.Kubeconfig, componentName)
	if err != nil {
		return err
	}
	client, eventClient, err := options.Clients(config)
	if err != nil {
		return err
	}
	metrics.Register()
	metricsServer, err := o.Metrics.MetricsServer(o.Kubeconfig, serviceDNSNames())
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting evictionrequest-controller", "version", version.Get(), "controllers", o.Controllers.Controllers)
	guard, stopGuard := o.newGuard(client, eventClient)
	defer stopGuard()
	descriptors := o.controllers(guard)
	var ready []healthz.HealthChecker
	var shared informers.SharedInformerFactory
	if o.Bridge.Enabled {
		// The bridge answers from caches on every replica, so the process
		// keeps one cache of each kind, which the controllers of every
		// leadership term share (as evictionrequest-apiserver does): one
		// pod cache, not the bridge's and the term's.
		shared = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(cacheTransform))
		controllers, check, err := o.startBridge(ctx, config, shared)
		if err != nil {
			return err
		}
		descriptors, ready = append(descriptors, controllers...), append(ready, check)
	}
	m := &controllermanager.Manager{
		Name:            componentName,
		LeaderElection:  o.LeaderElection,
		Client:          client,
		EventClient:     eventClient,
		SharedInformers: shared,
		InformerOptions: []informers.SharedInformerOption{informers.WithTransform(cacheTransform)},
		Metrics:         metricsServer,
		ReadyChecks:     ready,
		Controllers:     descriptors,
	}
	if shared != nil {
		// Every informer is asked for before the factory starts: one asked
		// for later would never start.
		if err := m.RegisterInformers(); err != nil {
			return err
		}
		// Stopped before Shutdown waits for them, whether Run ends with
		// ctx or on an error of its own.
		informersCtx, stopInformers := context.WithCancel(ctx)
		shared.Start(informersCtx.Done())
		defer shared.Shutdown()
		defer stopInformers()
	}
	return m.Run(ctx)
}

// controllers are the controllers of evictionrequest-controller, in the
// order they are built: the two kube-controller-manager also runs from
// 1.38 on step aside for its own (guard), the actors go on.
func (o *Options) controllers(guard *stepaside.Guard) []controllermanager.Descriptor {
	controller := o.Controllers.Enabled(lifecycle.ControllerName)
	responder := o.Controllers.Enabled(evictor.ControllerName)
	// The guard runs beside either unless turned off by name: it is how
	// they make way for kube-controller-manager's, not a job of its own.
	guarded := (controller || responder) && !options.Disabled(stepaside.ControllerName, o.Controllers.Controllers)
	return []controllermanager.Descriptor{
		{Name: stepaside.ControllerName, Enabled: guarded, Informers: stepaside.RegisterInformers, Init: guarding(guard)},
		{Name: lifecycle.ControllerName, Enabled: controller, Informers: lifecycle.RegisterInformers,
			Init: yielding(guard, stepaside.EvictionRequestController, o.newEvictionRequestController)},
		{Name: evictor.ControllerName, Enabled: responder, Informers: evictor.RegisterInformers,
			Init: yielding(guard, stepaside.ImperativeEvictionResponder, o.newEvictor)},
		assembly.NodeDrain(o.NodeDrain, o.Client),
	}
}

// newGuard returns the guard of the process's controllers, which trusts
// kube-controller-manager's field managers while the policy that reserves
// them is in force, records its event with a recorder of its own, stopped
// by the function returned, and its decisions in its namespace.
func (o *Options) newGuard(client, eventClient kubernetes.Interface) (*stepaside.Guard, func()) {
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventClient.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: componentName})
	// Each series exists from the start, so that the alerts' rules read
	// zero rather than nothing.
	for _, c := range stepaside.Counterparts {
		metrics.SteppedAside.WithLabelValues(string(c)).Set(0)
		metrics.StepAsideUntrustedWrites.WithLabelValues(string(c))
	}
	return stepaside.New(stepaside.Config{
		Clock:    clock.RealClock{},
		Recorder: recorder,
		// The record lives in the namespace the process runs in, where
		// its Role lets it be read, whatever Lease it elects its leader on.
		Record:      &stepaside.Record{ConfigMaps: client.CoreV1(), Namespace: options.InstallNamespace(), CallTimeout: o.Client.CallTimeout},
		Policy:      &stepaside.Policy{Client: client.AdmissionregistrationV1(), Name: stepaside.PolicyName, CallTimeout: o.Client.CallTimeout},
		OnStep:      func(c stepaside.Counterpart) { metrics.SteppedAside.WithLabelValues(string(c)).Set(1) },
		OnUntrusted: func(c stepaside.Counterpart) { metrics.StepAsideUntrustedWrites.WithLabelValues(string(c)).Inc() },
	}), broadcaster.Shutdown
}

// guarding builds the guard's watch of each term's Evictions and
// EvictionRequests.
func guarding(guard *stepaside.Guard) controllermanager.InitFunc {
	return func(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
		lifecycleInformers := cc.Informers.Lifecycle().V1alpha1()
		return stepaside.Watch(ctx, guard, lifecycleInformers.Evictions().Informer(), lifecycleInformers.EvictionRequests().Informer())
	}
}

// yielding builds a controller with init that stops once guard steps
// aside for counterpart.
func yielding(guard *stepaside.Guard, counterpart stepaside.Counterpart, init controllermanager.InitFunc) controllermanager.InitFunc {
	return func(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
		c, err := init(ctx, cc)
		if err != nil {
			return nil, err
		}
		return guard.Yielding(counterpart, c), nil
	}
}

// newEvictionRequestController builds the eviction request controller.
func (o *Options) newEvictionRequestController(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
	lifecycleInformers := cc.Informers.Lifecycle().V1alpha1()
	c, err := lifecycle.NewController(ctx, cc.Client, lifecycleInformers.Evictions(), lifecycleInformers.EvictionRequests(),
		cc.Informers.Core().V1().Pods(), cc.Clock, lifecycle.Options{
			HeartbeatDeadline: o.HeartbeatDeadline, CallTimeout: o.Client.CallTimeout, EventClient: cc.EventClient,
		})
	if err != nil {
		return nil, err
	}
	return controllermanager.WithWorkers(c, o.Workers), nil
}

// newEvictor builds the default evictor.
func (o *Options) newEvictor(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
	c, err := evictor.NewController(ctx, cc.Client, cc.Informers.Lifecycle().V1alpha1().Evictions(), cc.Informers.Core().V1().Pods(),
		cc.Clock, evictor.Options{CallTimeout: o.Client.CallTimeout, EventClient: cc.EventClient})
	if err != nil {
		return nil, err
	}
	return controllermanager.WithWorkers(c, o.Workers), nil
}
