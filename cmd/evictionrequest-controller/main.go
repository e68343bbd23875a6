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

// Command evictionrequest-controller runs the controllers of Kubernetes
// 1.37's lifecycle.k8s.io/v1alpha1 EvictionRequest API: the eviction
// request controller and the default evictor.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/evictionrequest/apiserver/cmd/evictionrequest-controller/app"
)

func main() {
	os.Exit(cli.Run(app.NewCommand(genericapiserver.SetupSignalContext())))
}
