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

package artifacts

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// The overlays of the eviction API bridge, one per API, have a webhook on
// pods/eviction that is safe by default (Ignore, NoneOnDryRun, a short
// time-out, opted-in namespaces, exempt identities) and calls the
// component that serves the bridge, which they turn on, trust, authorize
// and have authenticate kube-apiserver with the CA of the files.
func TestTheEvictionBridgeOverlays(t *testing.T) {
	for _, overlay := range []string{"bridge", "lifecycle-bridge"} {
		t.Run(overlay, func(t *testing.T) {
			objects := render(t, overlay)
			obj := find(objects, "ValidatingWebhookConfiguration", "evictionrequest-eviction-bridge")
			if obj == nil {
				t.Fatal("no webhook")
			}
			var config admissionregistrationv1.ValidatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &config); err != nil {
				t.Fatal(err)
			}
			w := config.Webhooks[0]
			if w.Name != bridge.WebhookName {
				t.Errorf("webhook %q, want %q, which the alerts and the dashboard read", w.Name, bridge.WebhookName)
			}
			if *w.FailurePolicy != admissionregistrationv1.Ignore || *w.SideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun ||
				*w.TimeoutSeconds > 10 || len(w.MatchConditions) == 0 {
				t.Errorf("webhook failurePolicy %v, sideEffects %v, timeout %ds, %d matchConditions", *w.FailurePolicy, *w.SideEffects, *w.TimeoutSeconds, len(w.MatchConditions))
			}
			if r := w.Rules[0]; !slices.Equal(r.Resources, []string{"pods/eviction"}) || !slices.Equal(r.Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) {
				t.Errorf("rule %+v, want CREATE pods/eviction", r)
			}
			if got := w.NamespaceSelector.MatchLabels[bridge.NamespaceLabel]; got != bridge.NamespaceOptIn {
				t.Errorf("namespace selector %+v, want the opt-in label", w.NamespaceSelector)
			}
			service := w.ClientConfig.Service
			dep := deployments(t, objects)[service.Name]
			if dep == nil || *service.Path != bridge.Path {
				t.Fatalf("the webhook calls %s%s, served by no Deployment of the overlay", service.Name, *service.Path)
			}
			args := dep.Spec.Template.Spec.Containers[0].Args
			for _, want := range []string{"--controllers=*,eviction-bridge", "--eviction-bridge-webhook-configuration=" + config.Name} {
				if !slices.Contains(args, want) {
					t.Errorf("Deployment %s lacks %s: %v", dep.Name, want, args)
				}
			}
			binding := find(objects, "ClusterRoleBinding", dep.Name+":eviction-bridge")
			if subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects"); len(subjects) != 1 ||
				subjects[0].(map[string]any)["name"] != dep.Spec.Template.Spec.ServiceAccountName {
				t.Errorf("the bridge's RBAC binds %v, want the service account of %s", subjects, dep.Name)
			}
			if ca := find(objects, "ConfigMap", "evictionrequest-eviction-bridge-client-ca"); ca == nil ||
				ca.Object["data"].(map[string]any)["ca.crt"] != string(testCerts[BridgeClientCertDir+"/ca.crt"]) {
				t.Errorf("the bridge's client CA is not that of the files: %v", ca)
			}
			if !slices.Contains(args, "--eviction-bridge-client-ca-file=/var/run/eviction-bridge/client-ca/ca.crt") {
				t.Errorf("Deployment %s does not authenticate kube-apiserver: %v", dep.Name, args)
			}
			if overlay == "lifecycle-bridge" {
				if find(objects, "Service", service.Name) == nil || find(objects, "Certificate", "evictionrequest-eviction-bridge") == nil {
					t.Error("the lifecycle overlay's bridge has no Service or no certificate")
				}
			}
		})
	}
}
