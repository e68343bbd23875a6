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
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

// controllersHookName names the post-start hook that starts the controllers.
const controllersHookName = "start-evictionrequest-controllers"

// installControllers runs the controller manager from a post-start hook,
// where the server's privileged loopback client reaches our own API, and
// adds its leader check to /healthz.
func (s *EvictionRequestServer) installControllers(c completedConfig) error {
	m := c.ExtraConfig.Controllers
	if m.Clock == nil {
		m.Clock = c.ExtraConfig.Clock
	}
	if err := s.GenericAPIServer.AddHealthChecks(m.HealthChecks()...); err != nil {
		return err
	}
	return s.GenericAPIServer.AddPostStartHook(controllersHookName, func(hookCtx genericapiserver.PostStartHookContext) error {
		config := rest.AddUserAgent(rest.CopyConfig(hookCtx.LoopbackClientConfig), m.Name)
		// A leader resumed after a freeze past its Lease writes nothing.
		config.Wrap(leaderelect.FenceWrites)
		loopback, err := versioned.NewForConfig(config)
		if err != nil {
			return err
		}
		m.EvictionRequests = loopback
		go func() {
			if err := m.Run(hookCtx); err != nil {
				klog.FromContext(hookCtx).Error(err, "Controllers stopped")
			}
		}()
		return nil
	})
}
