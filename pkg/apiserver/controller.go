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
	"time"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

// controllersHookName names the post-start hook that starts the controllers
// and the pre-shutdown hook that stops them.
const controllersHookName = "start-evictionrequest-controllers"

// installControllers runs the controller manager from a post-start hook,
// where the server's privileged loopback client reaches our own API, stops
// it from a pre-shutdown hook (controllersRun), and adds its leader check
// to /healthz.
func (s *EvictionRequestServer) installControllers(c completedConfig) error {
	m := c.ExtraConfig.Controllers
	if m.Clock == nil {
		m.Clock = c.ExtraConfig.Clock
	}
	if err := s.GenericAPIServer.AddHealthChecks(m.HealthChecks()...); err != nil {
		return err
	}
	run := &controllersRun{}
	if err := s.GenericAPIServer.AddPostStartHook(controllersHookName, func(hookCtx genericapiserver.PostStartHookContext) error {
		config := rest.AddUserAgent(rest.CopyConfig(hookCtx.LoopbackClientConfig), m.Name)
		// A leader resumed after a freeze past its Lease writes nothing.
		config.Wrap(leaderelect.FenceWrites)
		loopback, err := versioned.NewForConfig(config)
		if err != nil {
			return err
		}
		m.EvictionRequests = loopback
		run.start(hookCtx, func(ctx context.Context) {
			if err := m.Run(ctx); err != nil {
				klog.FromContext(ctx).Error(err, "Controllers stopped")
			}
		})
		return nil
	}); err != nil {
		return err
	}
	return s.GenericAPIServer.AddPreShutdownHook(controllersHookName, func() error {
		// Slow controllers must not turn a clean shutdown into a failed
		// one: stop logs them, the shutdown goes on.
		_ = run.stop(stopTimeout(m.LeaderElection.RenewDeadline.Duration))
		return nil
	})
}

// stopTimeout is how long a shutdown waits for the controllers to stop and
// give their Lease up: the renew deadline, which also bounds client-go's
// release of the Lease (a controller still stopping after it can write
// nothing: its writes are fenced), or 10 s, the flag's default, without
// one. With the HTTP server's shutdown after it, the process exits well
// within a pod's default grace period of 30 s.
func stopTimeout(renewDeadline time.Duration) time.Duration {
	if renewDeadline <= 0 {
		return 10 * time.Second
	}
	return renewDeadline
}
