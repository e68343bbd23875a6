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

// Package fuzzer fills EvictionRequests with random values for the API
// round-trip tests.
package fuzzer

import (
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// Funcs returns the fuzzer functions of the coordination group. Fields the
// v1alpha1 defaulters fill are never left empty, so that decoding a fuzzed
// object does not change it.
var Funcs = func(codecs runtimeserializer.CodecFactory) []interface{} {
	return []interface{}{
		func(spec *coordination.EvictionRequestSpec, c randfill.Continue) {
			c.FillNoCustom(spec)
			if spec.Type == "" {
				spec.Type = coordination.Soft
			}
			if spec.HeartbeatDeadlineSeconds == nil {
				deadline := int32(600 + c.Intn(86400-600))
				spec.HeartbeatDeadlineSeconds = &deadline
			}
		},
	}
}
