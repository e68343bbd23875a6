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

// Package version holds the version of the project's binaries, set at build
// time by the Makefile:
//
//	go build -ldflags "-X github.com/evictionrequest/apiserver/pkg/version.version=v0.1.0" ...
//
// It is not k8s.io/component-base/version: that one is the Kubernetes
// version the server's compatibility (emulation) versions derive from, and
// must stay the one of the k8s.io libraries it is built with.
package version

// version is overridden by the linker; "devel" marks a build without it.
var version = "v0.0.0-devel"

// Get returns the version of this build.
func Get() string {
	return version
}
