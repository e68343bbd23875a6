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

package options_test

import (
	"context"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	server "github.com/evictionrequest/apiserver/cmd/evictionrequest-apiserver/app"
	lifecyclecontroller "github.com/evictionrequest/apiserver/cmd/evictionrequest-controller/app"
	plugin "github.com/evictionrequest/apiserver/cmd/kubectl-evictionrequest/app"
	surgeinterceptor "github.com/evictionrequest/apiserver/cmd/surge-interceptor/app"
)

// Every command of the project spells its client flags alike: an operator
// who set --kube-api-call-timeout on one knows it on the others.
func TestEveryCommandNamesItsClientFlagsAlike(t *testing.T) {
	commands := map[string]*cobra.Command{
		"evictionrequest-apiserver":  server.NewCommandStartServer(context.Background(), server.NewOptions()),
		"surge-interceptor":          surgeinterceptor.NewCommand(context.Background()),
		"evictionrequest-controller": lifecyclecontroller.NewCommand(context.Background()),
		"kubectl-evictionrequest":    plugin.NewCommand(genericiooptions.NewTestIOStreamsDiscard()),
	}
	for name, cmd := range commands {
		for _, flag := range []string{"kube-api-qps", "kube-api-burst", "kube-api-call-timeout"} {
			if cmd.Flags().Lookup(flag) == nil && cmd.PersistentFlags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", name, flag)
			}
		}
	}
	for _, name := range []string{"evictionrequest-apiserver", "surge-interceptor", "evictionrequest-controller"} {
		for _, flag := range []string{"leader-elect", "leader-elect-resource-lock", "leader-elect-resource-namespace", "leader-elect-lease-duration"} {
			if commands[name].Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", name, flag)
			}
		}
	}
}
