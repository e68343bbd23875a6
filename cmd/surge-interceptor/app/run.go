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
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
	"github.com/evictionrequest/apiserver/pkg/version"
)

// componentName names surge-interceptor in logs and user agents.
const componentName = "surge-interceptor"

// Run runs the surge interceptor until ctx ends: while this process holds
// the Lease, or at once when leader election is off.
func (o *Options) Run(ctx context.Context) error {
	if err := logsapi.ValidateAndApply(o.Logs, nil); err != nil {
		return err
	}
	config, err := o.Client.Config(o.Kubeconfig, componentName)
	if err != nil {
		return err
	}
	kube, eventClient, err := options.Clients(config)
	if err != nil {
		return err
	}
	evr, err := versioned.NewForConfig(config)
	if err != nil {
		return err
	}
	api, _ := evictionapi.Parse(o.API)
	if o.api, err = evictionapi.Discover(kube.Discovery(), api); err != nil {
		return err
	}
	if o.Name == "" {
		o.Name = surge.DefaultName
		if o.api == evictionapi.Lifecycle {
			o.Name = surge.DefaultLifecycleName
		}
	}
	if err := validName(o.api, o.Name); err != nil {
		return err
	}
	metrics.Register()
	metricsServer, err := o.Metrics.MetricsServer(o.Kubeconfig, nil)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting the surge interceptor", "name", o.Name, "api", o.api, "version", version.Get())
	m := &controllermanager.Manager{
		Name:             componentName,
		LeaderElection:   o.LeaderElection,
		Client:           kube,
		EventClient:      eventClient,
		EvictionRequests: evr,
		// The surge caches every pod it may watch: what it reads of them.
		InformerOptions: []informers.SharedInformerOption{informers.WithNamespace(o.Namespace), informers.WithTransform(surge.CacheTransform)},
		Metrics:         metricsServer,
		Controllers:     []controllermanager.Descriptor{{Name: "surge", Enabled: true, Init: o.newSurge}},
	}
	return m.Run(ctx)
}

// newSurge builds the interceptor and its janitor on the term's informers.
func (o *Options) newSurge(ctx context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	surger := surge.New(surge.Config{
		Name: o.Name, API: o.api, Kube: cc.Client, EvictionRequests: cc.EvictionRequests, Informers: cc.Informers,
		Recorder:     broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: o.Name}),
		Clock:        cc.Clock,
		PollInterval: o.PollInterval, CallTimeout: o.Client.CallTimeout,
	})
	i, err := interceptor.New(interceptor.Config{
		Name: o.Name, API: o.api, Namespace: o.Namespace, Handler: surger.Handle,
		Client: cc.EvictionRequests, KubeClient: cc.Client,
		HeartbeatPeriod: o.HeartbeatPeriod, CallTimeout: o.Client.CallTimeout,
	})
	if err != nil {
		broadcaster.Shutdown()
		return nil, err
	}
	return controllermanager.RunFunc(func(ctx context.Context) error {
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cc.EventClient.CoreV1().Events("")})
		defer broadcaster.Shutdown()
		if !surger.WaitForCacheSync(ctx) {
			return nil
		}
		janitorDone := make(chan error, 1)
		go func() { janitorDone <- surger.RunJanitor(ctx, o.JanitorPeriod) }()
		err := i.Run(ctx)
		return errors.Join(err, <-janitorDone)
	}), nil
}
