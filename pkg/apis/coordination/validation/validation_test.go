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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// createCases are the cases of TestValidateEvictionRequest: a change of a valid request, and the errors it must get.
var createCases = map[string]struct {
	mutate func(er *coordination.EvictionRequest)
	want   []string
}{
	"valid": {
		mutate: func(er *coordination.EvictionRequest) {},
	},
	"generateName is refused": {
		mutate: func(er *coordination.EvictionRequest) { er.GenerateName = "evr-" },
		want:   []string{"FieldValueForbidden metadata.generateName"},
	},
	"name must equal the pod UID": {
		mutate: func(er *coordination.EvictionRequest) { er.Name = "web-0" },
		want:   []string{"FieldValueInvalid metadata.name"},
	},
	"namespace is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Namespace = "" },
		want:   []string{"FieldValueRequired metadata.namespace"},
	},
	"type is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Type = "" },
		want:   []string{"FieldValueRequired spec.type"},
	},
	"type Hard is not supported": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Type = "Hard" },
		want:   []string{"FieldValueNotSupported spec.type"},
	},
	"podRef is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef = nil },
		want:   []string{"FieldValueRequired spec.target.podRef"},
	},
	"podRef name is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef.Name = "" },
		want:   []string{"FieldValueRequired spec.target.podRef.name"},
	},
	"podRef name must be a DNS subdomain": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef.Name = "Web_0" },
		want:   []string{"FieldValueInvalid spec.target.podRef.name"},
	},
	"podRef uid is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Target.PodRef.UID = "" },
		want:   []string{"FieldValueRequired spec.target.podRef.uid"},
	},
	"at least one requester on create": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = nil },
		want:   []string{"FieldValueRequired spec.requesters"},
	},
	"100 requesters are accepted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = requesters(100) },
	},
	"101 requesters are too many": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters = requesters(101) },
		want:   []string{"FieldValueTooMany spec.requesters"},
	},
	"requester name is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters[0].Name = "" },
		want:   []string{"FieldValueRequired spec.requesters[0].name"},
	},
	"requester name must be a DNS subdomain": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters[0].Name = "Node Maintenance" },
		want:   []string{"FieldValueInvalid spec.requesters[0].name"},
	},
	"requesters must be unique": {
		mutate: func(er *coordination.EvictionRequest) {
			er.Spec.Requesters = []coordination.Requester{{Name: "a.example.com"}, {Name: "a.example.com"}}
		},
		want: []string{"FieldValueDuplicate spec.requesters[1].name"},
	},
	"requesters in k8s.io are not restricted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Requesters[0].Name = "descheduler.k8s.io" },
	},
	"no interceptors are accepted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = nil },
	},
	"100 interceptors are accepted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = interceptors(100) },
	},
	"101 interceptors are too many": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors = interceptors(101) },
		want:   []string{"FieldValueTooMany spec.interceptors"},
	},
	"interceptor name must be a DNS subdomain": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[1].Name = "-b.example.com" },
		want:   []string{"FieldValueInvalid spec.interceptors[1].name"},
	},
	"interceptor name is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[2].Name = "" },
		want:   []string{"FieldValueRequired spec.interceptors[2].name"},
	},
	"interceptors must be unique": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[2].Name = "a.example.com" },
		want:   []string{"FieldValueDuplicate spec.interceptors[2].name"},
	},
	"every allow-listed k8s.io interceptor is accepted": {
		mutate: func(er *coordination.EvictionRequest) {
			er.Spec.Interceptors = nil
			for _, name := range []string{"replicaset.apps.k8s.io", "deployment.apps.k8s.io", "statefulset.apps.k8s.io",
				"daemonset.apps.k8s.io", "horizontalpodautoscaler.autoscaling.k8s.io", "nodemaintenance.k8s.io"} {
				er.Spec.Interceptors = append(er.Spec.Interceptors, coordination.Interceptor{Name: name})
			}
		},
	},
	"k8s.io interceptor off the allow-list is refused": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[0].Name = "actor-a.k8s.io" },
		want:   []string{"FieldValueInvalid spec.interceptors[0].name"},
	},
	"k8s.io itself is reserved": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[0].Name = "k8s.io" },
		want:   []string{"FieldValueInvalid spec.interceptors[0].name"},
	},
	"subdomain of an allow-listed name is refused": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[0].Name = "x.nodemaintenance.k8s.io" },
		want:   []string{"FieldValueInvalid spec.interceptors[0].name"},
	},
	"a name merely ending in k8s.io is not reserved": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.Interceptors[0].Name = "notk8s.io" },
	},
	"heartbeat deadline is required": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = nil },
		want:   []string{"FieldValueRequired spec.heartbeatDeadlineSeconds"},
	},
	"heartbeat deadline 599 is too short": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](599) },
		want:   []string{"FieldValueInvalid spec.heartbeatDeadlineSeconds"},
	},
	"heartbeat deadline 86400 is accepted": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](86400) },
	},
	"heartbeat deadline 86401 is too long": {
		mutate: func(er *coordination.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](86401) },
		want:   []string{"FieldValueInvalid spec.heartbeatDeadlineSeconds"},
	},
}

func TestValidateEvictionRequest(t *testing.T) {
	cases := createCases
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			er := validEvictionRequest()
			er.ResourceVersion = "" // as sent for creation
			tc.mutate(er)
			expectErrors(t, ValidateEvictionRequest(er), tc.want...)
		})
	}
}

func TestValidateInterceptorsNamesThePath(t *testing.T) {
	path := field.NewPath("metadata", "annotations").Key("evictionrequest.coordination.k8s.io/interceptors")
	errs := ValidateInterceptors([]coordination.Interceptor{{Name: "ok.example.com"}, {Name: "bad.k8s.io"}}, path)
	expectErrors(t, errs, "FieldValueInvalid metadata.annotations[evictionrequest.coordination.k8s.io/interceptors][1].name")
	if !strings.Contains(errs[0].Detail, "nodemaintenance.k8s.io") {
		t.Errorf("the refusal should list the allowed k8s.io names, got %q", errs[0].Detail)
	}
}
