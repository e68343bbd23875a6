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

package validation

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

func TestValidateEvictionRequestUpdate(t *testing.T) {
	cases := map[string]struct {
		mutate func(er *coordination.EvictionRequest)
		want   []string
	}{
		"no change": {
			mutate: func(er *coordination.EvictionRequest) {},
		},
		"requesters may be added": {
			mutate: func(er *coordination.EvictionRequest) {
				er.Spec.Requesters = append(er.Spec.Requesters, coordination.Requester{Name: "descheduling.avalanche.io"})
			},
		},
		"requesters may be emptied to cancel": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = nil },
		},
		"requesters stay unique": {
			mutate: func(er *coordination.EvictionRequest) {
				er.Spec.Requesters = append(er.Spec.Requesters, er.Spec.Requesters[0])
			},
			want: []string{"FieldValueDuplicate spec.requesters[1].name"},
		},
		"type is immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Type = "Hard" },
			want:   []string{"FieldValueNotSupported spec.type", "FieldValueInvalid spec.type"},
		},
		"target is immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef.Name = "web-1" },
			want:   []string{"FieldValueInvalid spec.target"},
		},
		"interceptors are immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = er.Spec.Interceptors[1:] },
			want:   []string{"FieldValueInvalid spec.interceptors"},
		},
		"heartbeat deadline is immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](1800) },
			want:   []string{"FieldValueInvalid spec.heartbeatDeadlineSeconds"},
		},
		"name is immutable": {
			mutate: func(er *coordination.EvictionRequest) { er.Name = "other" },
			want:   []string{"FieldValueInvalid metadata.name"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oldER := validEvictionRequest()
			newER := oldER.DeepCopy()
			tc.mutate(newER)
			expectErrors(t, ValidateEvictionRequestUpdate(newER, oldER), tc.want...)
		})
	}
}
