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

package evictionrequest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// createCases are the cases of TestAdmitCreate: the pods the cache and the API server have, the request and its writer, and what admission must make of it.
var createCases = map[string]struct {
	cached, live     []runtime.Object
	mutate           func(*coordination.EvictionRequest)
	user             string
	wantRefusal      string
	wantInterceptors []string
	wantLabels       map[string]string
}{
	"interceptors come from the annotation in order and pod labels win": {
		cached: []runtime.Object{newPod()}, live: []runtime.Object{newPod()},
		wantInterceptors: []string{"fallback.rescue.example.com", "deployment.apps.k8s.io", "migrator.example.com"},
		wantLabels:       map[string]string{"app": "web", "tier": "frontend", "requester": "drain"},
	},
	"a pod without the annotation has no interceptors": {
		cached:     []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations = nil })},
		wantLabels: map[string]string{"app": "web", "tier": "frontend", "requester": "drain"},
	},
	"a pod created a moment ago is found by a live GET": {
		live:             []runtime.Object{newPod()},
		wantInterceptors: []string{"fallback.rescue.example.com", "deployment.apps.k8s.io", "migrator.example.com"},
		wantLabels:       map[string]string{"app": "web", "tier": "frontend", "requester": "drain"},
	},
	"a pod recreated with a new UID the cache has not seen is found live": {
		cached:     []runtime.Object{newPod(func(p *corev1.Pod) { p.UID = "old-uid" })},
		live:       []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations = nil })},
		wantLabels: map[string]string{"app": "web", "tier": "frontend", "requester": "drain"},
	},
	"interceptors set by the client are refused": {
		cached: []runtime.Object{newPod()},
		mutate: func(er *coordination.EvictionRequest) {
			er.Spec.Interceptors = []coordination.Interceptor{{Name: "sneaky.example.com"}}
		},
		wantRefusal: "422 FieldValueForbidden spec.interceptors",
	},
	"a missing pod is refused": {
		wantRefusal: "422 FieldValueNotFound spec.target.podRef.name",
	},
	"a pod with another UID is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.UID = "other-uid" })},
		live:        []runtime.Object{newPod(func(p *corev1.Pod) { p.UID = "other-uid" })},
		wantRefusal: "422 FieldValueInvalid spec.target.podRef.uid",
	},
	"a pod with the same name in another namespace is not the target": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Namespace = "elsewhere" })},
		live:        []runtime.Object{newPod(func(p *corev1.Pod) { p.Namespace = "elsewhere" })},
		wantRefusal: "422 FieldValueNotFound spec.target.podRef.name",
	},
	"an invalid interceptor name in the annotation is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "ok.example.com,Not_A_Name" })},
		wantRefusal: "422 FieldValueInvalid spec.interceptors[1].name",
	},
	"a duplicate interceptor in the annotation is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "a.example.com,a.example.com" })},
		wantRefusal: "422 FieldValueDuplicate spec.interceptors[1].name",
	},
	"an empty entry in the annotation is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "a.example.com,,b.example.com" })},
		wantRefusal: "422 FieldValueRequired spec.interceptors[1].name",
	},
	"a k8s.io interceptor off the allow-list is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "actor-a.k8s.io" })},
		wantRefusal: "422 FieldValueInvalid spec.interceptors[0].name",
	},
	"more than 100 interceptors are refused": {
		cached: []runtime.Object{newPod(func(p *corev1.Pod) {
			names := make([]string, 101)
			for i := range names {
				names[i] = fmt.Sprintf("i%d.example.com", i)
			}
			p.Annotations[podInterceptorsAnnotation] = strings.Join(names, ",")
		})},
		wantRefusal: "422 FieldValueTooMany spec.interceptors",
	},
	"a caller who may not delete the pod is forbidden": {
		cached: []runtime.Object{newPod()}, user: "intern",
		wantRefusal: "403",
	},
}

func TestAdmitCreate(t *testing.T) {
	cases := createCases
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plugin := newPlugin(t, tc.cached, tc.live)
			er := newEvictionRequest()
			if tc.mutate != nil {
				tc.mutate(er)
			}
			if tc.user == "" {
				tc.user = allowedUser
			}
			a := attributes(admission.Create, "", tc.user, er, nil)
			err := plugin.Admit(context.Background(), a, nil)
			if got := refusal(err); got != tc.wantRefusal {
				t.Fatalf("refusal = %q, want %q (error: %v)", got, tc.wantRefusal, err)
			}
			if err != nil {
				return
			}
			var interceptors []string
			for _, i := range er.Spec.Interceptors {
				interceptors = append(interceptors, i.Name)
			}
			if diff := cmp.Diff(tc.wantInterceptors, interceptors); diff != "" {
				t.Errorf("spec.interceptors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLabels, er.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefusalsNameTheRule(t *testing.T) {
	plugin := newPlugin(t, []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "actor-a.k8s.io" })}, nil)
	err := plugin.Admit(context.Background(), attributes(admission.Create, "", allowedUser, newEvictionRequest(), nil), nil)
	for _, want := range []string{"spec.interceptors[0].name", podInterceptorsAnnotation, "web-0", "reserved"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal of a reserved interceptor name %q lacks %q", err, want)
		}
	}

	err = plugin.Validate(context.Background(), attributes(admission.Create, "", "intern", newEvictionRequest(), nil), nil)
	for _, want := range []string{`"intern"`, `cannot delete pod "web-0"`, `verb "delete" on resource "pods"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("403 %q lacks %q", err, want)
		}
	}
}
