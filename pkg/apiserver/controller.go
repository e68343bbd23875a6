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
	"time"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

const controllerHookName = "start-evictionrequest-controller"

// ControllerConfig configures the controllers the server runs in-process.
type ControllerConfig struct {
	// Workers is the number of EvictionRequests synced in parallel.
	Workers int
	// LeaderElection keeps replicas from acting at the same time.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// KubeConfig reaches the cluster: pods, evictions, nodes, events and
	// the Lease.
	KubeConfig *rest.Config
	// KubeAPIQPS and KubeAPIBurst limit the client of KubeConfig; events
	// get a client of their own with the same limits.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// CallTimeout bounds each call to an API.
	CallTimeout time.Duration
	// NodeDrain, when set, runs the declarative node drain requester.
	NodeDrain *NodeDrainConfig
}

// NodeDrainConfig configures the node drain requester.
type NodeDrainConfig struct {
	// Requester is the name it lists itself under in spec.requesters.
	Requester string
	// Workers is the number of nodes synced in parallel.
	Workers int
}

// installController starts the controllers from a post-start hook: they
// reach our own API through the privileged loopback client and the cluster
// through the server's kubeconfig, and act only while this process holds
// the leader election Lease.
func (s *EvictionRequestServer) installController(c completedConfig) error {
	cfg := c.ExtraConfig.Controller
	factory := c.GenericConfig.SharedInformerFactory
	if cfg.KubeConfig == nil || factory == nil {
		return fmt.Errorf("the eviction request controller needs a kubeconfig of the cluster (--kubeconfig or in-cluster)")
	}
	kubeConfig := rest.CopyConfig(cfg.KubeConfig)
	kubeConfig.QPS, kubeConfig.Burst = cfg.KubeAPIQPS, cfg.KubeAPIBurst
	kubeClient, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(kubeConfig), evictionrequest.ControllerName))
	if err != nil {
		return err
	}
	// A client of its own is a rate limiter of its own.
	eventClient, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(kubeConfig), evictionrequest.ControllerName))
	if err != nil {
		return err
	}
	if err := requestInformers(c); err != nil {
		return err
	}
	metrics.Register()
	leaderHealth := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	if cfg.LeaderElection.LeaderElect {
		if err := s.GenericAPIServer.AddHealthChecks(leaderHealth); err != nil {
			return err
		}
	}
	return s.GenericAPIServer.AddPostStartHook(controllerHookName, func(hookCtx genericapiserver.PostStartHookContext) error {
		loopback, err := versioned.NewForConfig(rest.AddUserAgent(rest.CopyConfig(hookCtx.LoopbackClientConfig), evictionrequest.ControllerName))
		if err != nil {
			return err
		}
		cc := controllerContext{
			cfg: cfg, kubeClient: kubeClient, eventClient: eventClient, loopback: loopback,
			factory: factory, podInformer: factory.Core().V1().Pods(), clock: c.ExtraConfig.Clock,
		}
		ctx := klog.NewContext(hookCtx, klog.LoggerWithName(klog.FromContext(hookCtx), evictionrequest.ControllerName))
		go runLeaderElected(ctx, kubeClient, cfg.LeaderElection, leaderHealth, cc.runTerm)
		return nil
	})
}

// requestInformers asks the server-wide informer factory, before the server
// starts it, for the informers the controllers share with admission: one
// cache of the cluster's pods per process.
func requestInformers(c completedConfig) error {
	factory := c.GenericConfig.SharedInformerFactory
	podInformer := factory.Core().V1().Pods()
	podInformer.Informer()
	if c.ExtraConfig.Controller.NodeDrain == nil {
		return nil
	}
	if err := nodedrain.AddPodIndexer(podInformer); err != nil {
		return err
	}
	factory.Core().V1().Nodes().Informer()
	factory.Policy().V1().PodDisruptionBudgets().Informer()
	return nil
}

// runLeaderElected runs term while this process holds the Lease of le, or
// at once when leader election is off.
func runLeaderElected(ctx context.Context, kubeClient kubernetes.Interface, le componentbaseconfig.LeaderElectionConfiguration,
	health *leaderelection.HealthzAdaptor, term func(context.Context)) {
	if !le.LeaderElect {
		term(ctx)
		return
	}
	err := leaderelect.Run(ctx, kubeClient.CoordinationV1(), leaderelect.Config{
		Namespace:     le.ResourceNamespace,
		Name:          le.ResourceName,
		LeaseDuration: le.LeaseDuration.Duration,
		RenewDeadline: le.RenewDeadline.Duration,
		RetryPeriod:   le.RetryPeriod.Duration,
		Healthz:       health,
	}, term)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Leader election failed")
	}
}
