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
	"fmt"
	"os"
	"sync"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest/metrics"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
)

const controllerHookName = "start-evictionrequest-controller"

// ControllerConfig configures the eviction request controller the server
// runs in-process.
type ControllerConfig struct {
	// Workers is the number of EvictionRequests synced in parallel.
	Workers int
	// LeaderElection keeps replicas from acting at the same time.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// KubeConfig reaches the cluster: pods, evictions, events and the Lease.
	KubeConfig *rest.Config
}

// installController starts the controller from a post-start hook: it
// reaches our own API through the privileged loopback client and the
// cluster through the server's kubeconfig, and acts only while it holds the
// leader election Lease.
func (s *EvictionRequestServer) installController(c completedConfig) error {
	cfg := c.ExtraConfig.Controller
	if cfg.KubeConfig == nil || c.GenericConfig.SharedInformerFactory == nil {
		return fmt.Errorf("the eviction request controller needs a kubeconfig of the cluster (--kubeconfig or in-cluster)")
	}
	kubeClient, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg.KubeConfig), evictionrequest.ControllerName))
	if err != nil {
		return err
	}
	// The pod informer is the one the admission plugin uses: one cache of
	// the cluster's pods per process.
	podInformer := c.GenericConfig.SharedInformerFactory.Core().V1().Pods()
	podInformer.Informer()
	metrics.Register()

	return s.GenericAPIServer.AddPostStartHook(controllerHookName, func(hookCtx genericapiserver.PostStartHookContext) error {
		loopback, err := versioned.NewForConfig(rest.AddUserAgent(rest.CopyConfig(hookCtx.LoopbackClientConfig), evictionrequest.ControllerName))
		if err != nil {
			return err
		}
		ctx := klog.NewContext(hookCtx, klog.LoggerWithName(klog.FromContext(hookCtx), evictionrequest.ControllerName))
		runTerm := func(ctx context.Context) {
			// Each leadership term has its own informers and queue, so that
			// nothing of a lost term acts in the next one.
			informers := externalversions.NewSharedInformerFactory(loopback, 0)
			controller, err := evictionrequest.NewController(ctx, kubeClient, loopback.CoordinationV1alpha1(),
				informers.Coordination().V1alpha1().EvictionRequests(), podInformer, clock.RealClock{})
			if err != nil {
				klog.FromContext(ctx).Error(err, "Cannot start the eviction request controller")
				return
			}
			informers.Start(ctx.Done())
			c.GenericConfig.SharedInformerFactory.Start(ctx.Done())
			controller.Run(ctx, cfg.Workers)
			informers.Shutdown()
		}
		go runLeaderElected(ctx, cfg.LeaderElection, kubeClient, runTerm)
		return nil
	})
}

// runLeaderElected runs term for as long as this process holds the Lease,
// and campaigns again after losing it, until ctx is canceled. A term has
// ended before the next campaign starts.
func runLeaderElected(ctx context.Context, cfg componentbaseconfig.LeaderElectionConfiguration, kubeClient kubernetes.Interface, term func(context.Context)) {
	logger := klog.FromContext(ctx)
	if !cfg.LeaderElect {
		term(ctx)
		return
	}
	hostname, err := os.Hostname()
	if err != nil {
		hostname = "unknown"
	}
	identity := hostname + "_" + uuid.NewString()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.ResourceNamespace, Name: cfg.ResourceName},
		Client:     kubeClient.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	for ctx.Err() == nil {
		var running sync.WaitGroup
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock:            lock,
			Name:            evictionrequest.ControllerName,
			LeaseDuration:   cfg.LeaseDuration.Duration,
			RenewDeadline:   cfg.RenewDeadline.Duration,
			RetryPeriod:     cfg.RetryPeriod.Duration,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					running.Add(1)
					defer running.Done()
					logger.Info("Acquired the leader election Lease", "lease", klog.KRef(cfg.ResourceNamespace, cfg.ResourceName), "identity", identity)
					term(ctx)
				},
				OnStoppedLeading: func() {
					logger.Info("Stopped leading", "lease", klog.KRef(cfg.ResourceNamespace, cfg.ResourceName), "identity", identity)
				},
			},
		})
		running.Wait()
	}
}
