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

package framework

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// BridgeWebhookConfiguration is the ValidatingWebhookConfiguration of the
// eviction-bridge components.
const BridgeWebhookConfiguration = "evictionrequest-eviction-bridge"

// ForgedReview posts, as caller, to the eviction API bridge directly (not
// through kube-apiserver) an AdmissionReview of an eviction of pod that
// claims user asked for it, as an attacker who reaches the bridge's port
// would; it returns the HTTP code and the bridge's response, nil unless 200.
func (f *Framework) ForgedReview(t testing.TB, caller localcluster.BridgeCaller, namespace, pod, user string) (int, *admissionv1.AdmissionResponse) {
	t.Helper()
	url, err := f.BridgeURL(t.Context(), BridgeWebhookConfiguration)
	if err != nil {
		t.Fatal(err)
	}
	client, err := f.BridgeClient(caller)
	if err != nil {
		t.Fatal(err)
	}
	eviction, err := json.Marshal(policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pod}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: uuid.NewUUID(), Operation: admissionv1.Create, Namespace: namespace, Name: pod,
			Kind:     metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, SubResource: "eviction",
			UserInfo: authenticationv1.UserInfo{Username: user},
			Object:   runtime.RawExtension{Raw: eviction},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = 30 * time.Second
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("posting a review to the eviction API bridge: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Logf("the eviction API bridge answered %d: %s", resp.StatusCode, data)
		return resp.StatusCode, nil
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &review); err != nil {
		t.Fatalf("the eviction API bridge's answer %q: %v", data, err)
	}
	return resp.StatusCode, review.Response
}
