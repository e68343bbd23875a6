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

// Package e2e exercises evictionrequest-apiserver through the kube-apiserver
// aggregator on the local control plane, with the generated clientset and the
// real kubectl, the way users reach it.
package e2e

import (
	"os"
	"testing"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// f is the cluster of the suite.
var f *framework.Framework

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, &f))
}
