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

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// DefaultHeartbeatDeadlineSeconds is the default of
// .spec.heartbeatDeadlineSeconds, the API's rule.
const DefaultHeartbeatDeadlineSeconds = coordination.DefaultHeartbeatDeadlineSeconds

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_EvictionRequestSpec defaults the type to Soft, the only type, and
// the heartbeat deadline to DefaultHeartbeatDeadlineSeconds.
func SetDefaults_EvictionRequestSpec(obj *EvictionRequestSpec) {
	if obj.Type == "" {
		obj.Type = Soft
	}
	if obj.HeartbeatDeadlineSeconds == nil {
		deadline := DefaultHeartbeatDeadlineSeconds
		obj.HeartbeatDeadlineSeconds = &deadline
	}
}
