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

package lifecyclecontroller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
	"github.com/evictionrequest/apiserver/pkg/version"
)

// Run runs the controllers until ctx ends: while this process holds the
// Lease, or at once when leader election is off.
func (o *Options) Run(ctx context.Context) error {
	if err := logsapi.ValidateAndApply(o.Logs, nil); err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	config, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return err
	}
	config = rest.AddUserAgent(o.Client.ApplyTo(config), lifecycle.ControllerName)
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	// A client of its own is a rate limiter of its own: events never
	// delay an eviction.
	eventClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	metrics.Register()
	leaderHealth := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	var checks []healthz.HealthChecker
	if o.LeaderElection.LeaderElect {
		checks = append(checks, leaderHealth)
	}
	stopServing, err := options.Serve(ctx, o.MetricsBindAddress, checks...)
	if err != nil {
		return err
	}
	defer stopServing()

	logger.Info("Starting evictionrequest-controller", "version", version.Get())
	cc := controllerContext{opts: o, client: client, eventClient: eventClient, clock: clock.RealClock{}}
	if !o.LeaderElection.LeaderElect {
		return runTerm(ctx, cc)
	}
	return leaderelect.Run(ctx, client.CoordinationV1(), options.LeaderElectConfig(o.LeaderElection, leaderHealth), func(ctx context.Context) {
		if err := runTerm(ctx, cc); err != nil {
			klog.FromContext(ctx).Error(err, "Controllers failed")
		}
	})
}

// runTerm builds the controllers on informers of the term's own, so that
// nothing of a lost term acts in the next, runs them until ctx ends and
// waits for them.
func runTerm(ctx context.Context, cc controllerContext) error {
	// Every write of the controllers is a server-side apply: the caches
	// need not hold managedFields, about a third of an Eviction.
	cc.informers = informers.NewSharedInformerFactoryWithOptions(cc.client, 0, informers.WithTransform(cachetransform.StripManagedFields))
	defer cc.informers.Shutdown()
	var controllers []*controller
	for _, start := range controllerStarts {
		c, err := start(ctx, cc)
		if err != nil {
			return err
		}
		if c != nil {
			controllers = append(controllers, c)
		}
	}
	cc.informers.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, c := range controllers {
		wg.Go(func() { c.run(klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), c.name))) })
	}
	wg.Wait()
	return nil
}
