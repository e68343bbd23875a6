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

package bridge

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// review posts an AdmissionReview of the eviction of pod to the bridge's
// handler and returns the HTTP code and the response.
func (f *fixture) review(namespace, pod string, dryRun ...string) (int, *admissionv1.AdmissionResponse) {
	f.t.Helper()
	return f.post(policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: namespace, Name: pod},
		DeleteOptions: &metav1.DeleteOptions{DryRun: dryRun},
	}, authenticationv1.UserInfo{Username: drainer})
}

// post posts an AdmissionReview of eviction by user to the bridge's
// handler and returns the HTTP code and the response.
func (f *fixture) post(eviction policyv1.Eviction, user authenticationv1.UserInfo) (int, *admissionv1.AdmissionResponse) {
	f.t.Helper()
	eviction.TypeMeta = metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"}
	raw, err := json.Marshal(eviction)
	if err != nil {
		f.t.Fatal(err)
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: types.UID("review-1"), Operation: admissionv1.Create, Namespace: eviction.Namespace, Name: eviction.Name,
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, SubResource: "eviction",
			UserInfo: user,
			Object:   runtime.RawExtension{Raw: raw},
		},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	recorder, r := httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
	if f.reviewer != nil {
		f.reviewer(r)
	}
	f.bridge.ServeHTTP(recorder, r)
	var review admissionv1.AdmissionReview
	if recorder.Code == http.StatusOK {
		if err := json.Unmarshal(recorder.Body.Bytes(), &review); err != nil {
			f.t.Fatal(err)
		}
	}
	return recorder.Code, review.Response
}

// The webhook answers kube-apiserver's review: 429 with a Retry-After and
// the message, the review's UID echoed; a pod without interceptors passes.
func TestTheWebhookAnswersWithA429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		intercepted, plain := interceptedPod("db-0").Obj(), wrappers.MakePod("web-0").UID("uid-web-0").Obj()
		f := newFixture(t, evictionapi.Coordination, intercepted, plain)
		code, response := f.review(intercepted.Namespace, intercepted.Name)
		if code != http.StatusOK || response == nil || response.UID != "review-1" || response.Allowed {
			t.Fatalf("HTTP %d, response %+v: want a refusal of review-1", code, response)
		}
		if r := response.Result; r.Code != http.StatusTooManyRequests || r.Details.RetryAfterSeconds != 5 || !strings.Contains(r.Message, Evacuation) {
			t.Errorf("result %+v, want 429, Retry-After 5 and %q", r, Evacuation)
		}
		if code, response := f.review(plain.Namespace, plain.Name); code != http.StatusOK || !response.Allowed {
			t.Errorf("HTTP %d, response %+v: want a pod without interceptors allowed", code, response)
		}
	})
}

// kubectl drain --dry-run=server asks for a dry run in the eviction's
// deleteOptions, not in the request: the webhook reads it there, and
// writes nothing.
func TestTheWebhookTakesADryRunFromTheEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		code, response := f.review(pod.Namespace, pod.Name, metav1.DryRunAll)
		if code != http.StatusOK || response.Allowed {
			t.Fatalf("HTTP %d, response %+v: want the refusal a real eviction gets", code, response)
		}
		if w := append(writes(f.kube.Actions()), writes(f.evr.Actions())...); len(w) != 0 {
			t.Errorf("a dry run wrote %v", w)
		}
	})
}
