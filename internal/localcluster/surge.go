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

package localcluster

import (
	"context"
	"fmt"
	"net/http"
)

// surgeInterceptorName is the service account of the artifacts/ overlays the
// surge interceptor authenticates as.
const surgeInterceptorName = "evictionrequest-surge-interceptor"

// SurgeInterceptorOptions describe a surge-interceptor process.
type SurgeInterceptorOptions struct {
	// Name names its log file.
	Name string
	// Args are flags added to those that connect it to the cluster.
	Args []string
}

// StartSurgeInterceptor starts a surge-interceptor with the arguments the
// Deployment of the deployed overlay gives it, authenticated as its service
// account, whose RBAC the overlay applied, and waits until it is healthy.
func (c *Cluster) StartSurgeInterceptor(ctx context.Context, opts SurgeInterceptorOptions) (*Process, error) {
	w, err := c.workloadOf(surgeInterceptorName, surgeInterceptorName)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := c.writeKubeconfig(surgeInterceptorName, loopbackURL("https", c.apiPort), c.pki.surgeInterceptor)
	if err != nil {
		return nil, err
	}
	ports, err := c.reservePorts(1)
	if err != nil {
		return nil, err
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[0])
	args := append(localArgs(w.args, map[string]string{"metrics-bind-address": metrics, "kubeconfig": ""}),
		"--kubeconfig="+kubeconfig, "--metrics-bind-address="+metrics)
	p, err := c.run(opts.Name, nil, "surge-interceptor", append(args, opts.Args...)...)
	if err != nil {
		return nil, err
	}
	return p, waitFor(ctx, p, opts.Name, func(ctx context.Context) error {
		return httpGetOK(ctx, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[0]), "ok")
	})
}

func (c *Cluster) startSurgeInterceptor(ctx context.Context) error {
	_, err := c.StartSurgeInterceptor(ctx, SurgeInterceptorOptions{Name: "surge-interceptor", Args: []string{"--v=2"}})
	return err
}
