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

package chart

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The eviction API bridge acts with its own rights for whoever calls it:
// the chart renders it only to serve kube-apiserver alone, or to serve
// every caller when the admin said so by name, and says which when it
// refuses.
func TestTheBridgeServesAnyCallerOnlyByName(t *testing.T) {
	for _, api := range []string{"coordination", "lifecycle"} {
		t.Run(api, func(t *testing.T) {
			base := []string{"--set=apis.lifecycle.enabled=true", "--set=evictionBridge.enabled=true", "--set=evictionBridge.api=" + api}
			_, err := helmTemplate(t, base...)
			if err == nil {
				t.Fatal("the chart rendered a bridge without client authentication")
			}
			for _, want := range []string{"evictionBridge.clientAuthentication.enabled=true", "evictionBridge.clientAuthentication.caBundle",
				"evictionBridge.clientAuthentication.allowUnauthenticatedCallers=true"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q:\n%v", want, err)
				}
			}

			allowed := append(base, "--set=evictionBridge.clientAuthentication.allowUnauthenticatedCallers=true")
			objects, err := helmTemplate(t, allowed...)
			if err != nil {
				t.Fatal(err)
			}
			args := containerArgs(t, find(objects, "Deployment", bridgeServer(api)))
			if !slices.Contains(args, "--eviction-bridge-allow-unauthenticated-callers") {
				t.Errorf("the bridge's server runs without --eviction-bridge-allow-unauthenticated-callers: %q", args)
			}
			notes, err := runHelm(append([]string{"install", "evictionrequest", chartDir, "--dry-run=client", "--namespace=" + namespace}, allowed...)...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(notes, "WARNING: the bridge serves whoever reaches its port") {
				t.Errorf("NOTES.txt does not warn that the bridge serves any caller:\n%s", notes)
			}

			_, err = helmTemplate(t, append(allowed, "--set=evictionBridge.clientAuthentication.enabled=true",
				"--set=evictionBridge.clientAuthentication.caBundle=example")...)
			if err == nil || !strings.Contains(err.Error(), "contradicts") {
				t.Errorf("the chart rendered client authentication and unauthenticated callers together: %v", err)
			}
		})
	}
}

// bridgeServer is the Deployment that serves the bridge of api.
func bridgeServer(api string) string {
	if api == "coordination" {
		return "evictionrequest-apiserver"
	}
	return "evictionrequest-controller"
}

// find is the object of kind and name among objects, nil when none is.
func find(objects []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, obj := range objects {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	return nil
}

// containerArgs are the arguments of the first container of the
// Deployment obj.
func containerArgs(t *testing.T, obj *unstructured.Unstructured) []string {
	t.Helper()
	if obj == nil {
		t.Fatal("no such Deployment")
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d); err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Args
}
