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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// hostileCase is one malformed, oversized or rule-breaking request, sent
// through kube-apiserver as any client would send it.
type hostileCase struct {
	name   string
	method string
	// target is "collection", "object" or "status".
	target      string
	query       string
	contentType string
	// body returns the request body from the stored request and a valid
	// new one (for another pod).
	body     func(stored, fresh *v1alpha1.EvictionRequest) string
	wantCode int
	// wantMessage are substrings of the answer: the field or rule at fault.
	wantMessage []string
	// inherited says why an answer is not what we would give: it comes
	// from k8s.io/apiserver before any of our code runs (docs/api.md,
	// "Answers inherited from k8s.io/apiserver").
	inherited string
}

const (
	jsonPatchVague    = "JSON patch errors are a 422 that does not say which operation failed"
	applyUnknownField = "server-side apply of an unknown field under fieldValidation=Strict is a 500 naming the field"
	applyDuplicateKey = "server-side apply of a list with a duplicate key is a 500 naming the key"
)

const (
	jsonType  = "application/json"
	mergeType = "application/merge-patch+json"
	patchType = "application/json-patch+json"
	smpType   = "application/strategic-merge-patch+json"
	applyType = "application/apply-patch+yaml"
)

func raw(s string) func(_, _ *v1alpha1.EvictionRequest) string {
	return func(_, _ *v1alpha1.EvictionRequest) string { return s }
}

// asJSON encodes er after mutate, with its apiVersion and kind.
func asJSON(er *v1alpha1.EvictionRequest, mutate func(*v1alpha1.EvictionRequest)) string {
	er = er.DeepCopy()
	er.APIVersion, er.Kind = v1alpha1.SchemeGroupVersion.String(), "EvictionRequest"
	if mutate != nil {
		mutate(er)
	}
	data, err := json.Marshal(er)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// fresh builds a create body from the valid new request.
func fresh(mutate func(*v1alpha1.EvictionRequest)) func(_, _ *v1alpha1.EvictionRequest) string {
	return func(_, er *v1alpha1.EvictionRequest) string { return asJSON(er, mutate) }
}

// stored builds an update body from the stored request.
func stored(mutate func(*v1alpha1.EvictionRequest)) func(_, _ *v1alpha1.EvictionRequest) string {
	return func(er, _ *v1alpha1.EvictionRequest) string { return asJSON(er, mutate) }
}

// applied builds a server-side apply body naming the stored request.
func applied(spec, status string) func(_, _ *v1alpha1.EvictionRequest) string {
	return func(er, _ *v1alpha1.EvictionRequest) string {
		body := fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1alpha1","kind":"EvictionRequest","metadata":{"name":%q,"namespace":%q}`, er.Name, er.Namespace)
		if spec != "" {
			body += `,"spec":` + spec
		}
		if status != "" {
			body += `,"status":` + status
		}
		return body + "}"
	}
}

func conditionsJSON(n int) string {
	var items []string
	for i := range n {
		items = append(items, fmt.Sprintf(`{"type":"T%d","status":"False","reason":"R","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}`, i))
	}
	return "[" + strings.Join(items, ",") + "]"
}

func hostileCases() []hostileCase {
	const fv = "fieldValidation=Strict"
	big := strings.Repeat("x", 3*1024*1024+1)
	return []hostileCase{
		// Bodies that are not an EvictionRequest.
		{name: "create: malformed JSON", method: http.MethodPost, target: "collection", contentType: jsonType, body: raw(`{"spec": `), wantCode: 400},
		{name: "create: empty body", method: http.MethodPost, target: "collection", contentType: jsonType, body: raw(``), wantCode: 400},
		{name: "create: a JSON array", method: http.MethodPost, target: "collection", contentType: jsonType, body: raw(`[1,2]`), wantCode: 400},
		{name: "create: wrong kind", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Kind = "Pod" }), wantCode: 400, wantMessage: []string{"Pod"}},
		{name: "create: unknown version", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.APIVersion = "coordination.k8s.io/v9" }), wantCode: 400, wantMessage: []string{"v9"}},
		{name: "create: unsupported media type", method: http.MethodPost, target: "collection", contentType: "text/plain", body: fresh(nil), wantCode: 415},
		{name: "create: oversize body", method: http.MethodPost, target: "collection", contentType: jsonType, body: raw(`{"metadata":{"name":"` + big + `"}}`), wantCode: 413},
		// Wrong types.
		{name: "create: spec.type a number", method: http.MethodPost, target: "collection", contentType: jsonType,
			body: raw(`{"apiVersion":"coordination.k8s.io/v1alpha1","kind":"EvictionRequest","spec":{"type":5}}`), wantCode: 400, wantMessage: []string{"spec.type"}},
		{name: "create: heartbeatDeadlineSeconds a string", method: http.MethodPost, target: "collection", contentType: jsonType,
			body: raw(`{"apiVersion":"coordination.k8s.io/v1alpha1","kind":"EvictionRequest","spec":{"heartbeatDeadlineSeconds":"600"}}`), wantCode: 400, wantMessage: []string{"heartbeatDeadlineSeconds"}},
		{name: "create: requesters an object", method: http.MethodPost, target: "collection", contentType: jsonType,
			body: raw(`{"apiVersion":"coordination.k8s.io/v1alpha1","kind":"EvictionRequest","spec":{"requesters":{"name":"a"}}}`), wantCode: 400, wantMessage: []string{"requesters"}},
		{name: "create: metadata a string", method: http.MethodPost, target: "collection", contentType: jsonType,
			body: raw(`{"apiVersion":"coordination.k8s.io/v1alpha1","kind":"EvictionRequest","metadata":"x"}`), wantCode: 400, wantMessage: []string{"metadata"}},
		// Strict field validation.
		{name: "create: unknown field, strict", method: http.MethodPost, target: "collection", query: fv, contentType: jsonType,
			body: func(_, er *v1alpha1.EvictionRequest) string {
				return strings.Replace(asJSON(er, nil), `"spec":{`, `"spec":{"bogus":1,`, 1)
			}, wantCode: 400, wantMessage: []string{`unknown field "spec.bogus"`}},
		{name: "create: duplicate field, strict", method: http.MethodPost, target: "collection", query: fv, contentType: jsonType,
			body: func(_, er *v1alpha1.EvictionRequest) string {
				return strings.Replace(asJSON(er, nil), `"spec":{`, `"spec":{"type":"Soft","type":"Soft",`, 1)
			}, wantCode: 400, wantMessage: []string{`duplicate field "spec.type"`}},
		{name: "create: bad fieldValidation", method: http.MethodPost, target: "collection", query: "fieldValidation=Loud", contentType: jsonType, body: fresh(nil), wantCode: 422, wantMessage: []string{"fieldValidation"}},
		{name: "create: bad dryRun", method: http.MethodPost, target: "collection", query: "dryRun=Some", contentType: jsonType, body: fresh(nil), wantCode: 422, wantMessage: []string{"dryRun"}},
		{name: "create: fieldManager too long", method: http.MethodPost, target: "collection", query: "fieldManager=" + strings.Repeat("m", 129), contentType: jsonType, body: fresh(nil), wantCode: 422, wantMessage: []string{"fieldManager"}},
		{name: "create: dry run writes nothing", method: http.MethodPost, target: "collection", query: "dryRun=All", contentType: jsonType, body: fresh(nil), wantCode: 201},
		// Every create rule.
		{name: "create: namespace in the body differs", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Namespace = "elsewhere" }), wantCode: 400, wantMessage: []string{"namespace"}},
		{name: "create: name is not the pod UID", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Name = "web-1" }), wantCode: 422, wantMessage: []string{"metadata.name"}},
		{name: "create: generateName", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Name, er.GenerateName = "", "evr-" }), wantCode: 422, wantMessage: []string{"metadata.generateName"}},
		{name: "create: resourceVersion", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.ResourceVersion = "1" }), wantCode: 422, wantMessage: []string{"metadata.resourceVersion"}},
		{name: "create: label value too long", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Labels = map[string]string{"a": strings.Repeat("v", 64)} }), wantCode: 422, wantMessage: []string{"metadata.labels"}},
		{name: "create: annotations too large", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) {
			er.Annotations = map[string]string{"a": strings.Repeat("v", 256*1024)}
		}), wantCode: 422, wantMessage: []string{"metadata.annotations"}},
		{name: "create: type Hard", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Spec.Type = "Hard" }), wantCode: 422, wantMessage: []string{"spec.type"}},
		{name: "create: no requester", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Spec.Requesters = nil }), wantCode: 422, wantMessage: []string{"spec.requesters"}},
		{name: "create: 101 requesters", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) {
			er.Spec.Requesters = nil
			for i := range 101 {
				er.Spec.Requesters = append(er.Spec.Requesters, v1alpha1.Requester{Name: fmt.Sprintf("r%d.example.com", i)})
			}
		}), wantCode: 422, wantMessage: []string{"spec.requesters"}},
		{name: "create: requester not a DNS subdomain", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Spec.Requesters[0].Name = "Node Drain" }), wantCode: 422, wantMessage: []string{"spec.requesters[0].name"}},
		{name: "create: duplicate requester", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) {
			er.Spec.Requesters = append(er.Spec.Requesters, er.Spec.Requesters[0])
		}), wantCode: 422, wantMessage: []string{"spec.requesters[1].name"}},
		{name: "create: deadline 599", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](599) }), wantCode: 422, wantMessage: []string{"spec.heartbeatDeadlineSeconds"}},
		{name: "create: deadline 86401", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](86401) }), wantCode: 422, wantMessage: []string{"spec.heartbeatDeadlineSeconds"}},
		{name: "create: no pod", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Spec.Target.PodRef = nil }), wantCode: 422, wantMessage: []string{"spec.target.podRef"}},
		{name: "create: pod without a UID", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Spec.Target.PodRef.UID = "" }), wantCode: 422, wantMessage: []string{"spec.target.podRef.uid"}},
		{name: "create: interceptors set by the client", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) {
			er.Spec.Interceptors = []v1alpha1.Interceptor{{Name: "me.example.com"}}
		}), wantCode: 422, wantMessage: []string{"spec.interceptors"}},
		{name: "create: the pod does not exist", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) { er.Spec.Target.PodRef.Name = "no-such-pod" }), wantCode: 422, wantMessage: []string{"spec.target.podRef.name"}},
		{name: "create: the pod has another UID", method: http.MethodPost, target: "collection", contentType: jsonType, body: fresh(func(er *v1alpha1.EvictionRequest) {
			er.Name = "00000000-0000-4000-8000-000000000000"
			er.Spec.Target.PodRef.UID = er.Name
		}), wantCode: 422, wantMessage: []string{"spec.target.podRef.uid"}},

		// Updates of the stored request: every rule through PUT.
		{name: "update: stale resourceVersion", method: http.MethodPut, target: "object", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) { er.ResourceVersion = "1" }), wantCode: 409},
		{name: "update: no resourceVersion", method: http.MethodPut, target: "object", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) { er.ResourceVersion = "" }), wantCode: 422, wantMessage: []string{"metadata.resourceVersion"}},
		{name: "update: name differs from the URL", method: http.MethodPut, target: "object", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) { er.Name = "other" }), wantCode: 400, wantMessage: []string{"name"}},
		{name: "update: malformed JSON", method: http.MethodPut, target: "object", contentType: jsonType, body: raw(`{"metadata":`), wantCode: 400},
		{name: "update: unknown field, strict", method: http.MethodPut, target: "object", query: fv, contentType: jsonType, body: func(er, _ *v1alpha1.EvictionRequest) string {
			return strings.Replace(asJSON(er, nil), `"spec":{`, `"spec":{"bogus":1,`, 1)
		}, wantCode: 400, wantMessage: []string{`unknown field "spec.bogus"`}},
		{name: "update: type is immutable", method: http.MethodPut, target: "object", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) { er.Spec.Type = "Hard" }), wantCode: 422, wantMessage: []string{"spec.type"}},
		{name: "update: target is immutable", method: http.MethodPut, target: "object", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) { er.Spec.Target.PodRef.Name = "web-9" }), wantCode: 422, wantMessage: []string{"spec.target"}},
		{name: "update: interceptors are immutable", method: http.MethodPut, target: "object", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) { er.Spec.Interceptors = nil }), wantCode: 422, wantMessage: []string{"spec.interceptors"}},
		{name: "update: deadline is immutable", method: http.MethodPut, target: "object", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) { er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](900) }), wantCode: 422, wantMessage: []string{"spec.heartbeatDeadlineSeconds"}},
		{name: "update: requester not a DNS subdomain", method: http.MethodPut, target: "object", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) {
			er.Spec.Requesters = append(er.Spec.Requesters, v1alpha1.Requester{Name: "Bad Name"})
		}), wantCode: 422, wantMessage: []string{"spec.requesters[1].name"}},

		// The same rules through each kind of patch.
		{name: "merge patch: deadline is immutable", method: http.MethodPatch, target: "object", contentType: mergeType, body: raw(`{"spec":{"heartbeatDeadlineSeconds":900}}`), wantCode: 422, wantMessage: []string{"spec.heartbeatDeadlineSeconds"}},
		{name: "merge patch: malformed", method: http.MethodPatch, target: "object", contentType: mergeType, body: raw(`{"spec":`), wantCode: 400},
		{name: "merge patch: wrong type", method: http.MethodPatch, target: "object", contentType: mergeType, body: raw(`{"spec":{"heartbeatDeadlineSeconds":"soon"}}`), wantCode: 422, wantMessage: []string{"heartbeatDeadlineSeconds"}},
		{name: "merge patch: bad requester", method: http.MethodPatch, target: "object", contentType: mergeType, body: raw(`{"spec":{"requesters":[{"name":"nodemaintenance.k8s.io"},{"name":"-bad-"}]}}`), wantCode: 422, wantMessage: []string{"spec.requesters[1].name"}},
		{name: "JSON patch: target is immutable", method: http.MethodPatch, target: "object", contentType: patchType, body: raw(`[{"op":"replace","path":"/spec/target/podRef/name","value":"web-9"}]`), wantCode: 422, wantMessage: []string{"spec.target"}},
		{name: "JSON patch: failing test", method: http.MethodPatch, target: "object", contentType: patchType, body: raw(`[{"op":"test","path":"/spec/type","value":"Hard"}]`), wantCode: 422, inherited: jsonPatchVague},
		{name: "JSON patch: missing path", method: http.MethodPatch, target: "object", contentType: patchType, body: raw(`[{"op":"remove","path":"/spec/nothing"}]`), wantCode: 422, inherited: jsonPatchVague},
		{name: "JSON patch: unknown op", method: http.MethodPatch, target: "object", contentType: patchType, body: raw(`[{"op":"explode","path":"/spec"}]`), wantCode: 422, inherited: jsonPatchVague},
		{name: "JSON patch: not a list", method: http.MethodPatch, target: "object", contentType: patchType, body: raw(`{"op":"add"}`), wantCode: 400},
		{name: "strategic merge patch: deadline is immutable", method: http.MethodPatch, target: "object", contentType: smpType, body: raw(`{"spec":{"heartbeatDeadlineSeconds":1200}}`), wantCode: 422, wantMessage: []string{"spec.heartbeatDeadlineSeconds"}},
		{name: "strategic merge patch: malformed", method: http.MethodPatch, target: "object", contentType: smpType, body: raw(`{{`), wantCode: 400},
		{name: "strategic merge patch: bad requester", method: http.MethodPatch, target: "object", contentType: smpType, body: raw(`{"spec":{"requesters":[{"name":"UPPER.example.com"}]}}`), wantCode: 422, wantMessage: []string{"spec.requesters"}},
		{name: "apply: no fieldManager", method: http.MethodPatch, target: "object", contentType: applyType, body: applied(`{"requesters":[{"name":"a.example.com"}]}`, ""), wantCode: 422, wantMessage: []string{"fieldManager"}},
		{name: "apply: deadline is immutable", method: http.MethodPatch, target: "object", query: "fieldManager=hostile&force=true", contentType: applyType, body: applied(`{"heartbeatDeadlineSeconds":1200}`, ""), wantCode: 422, wantMessage: []string{"spec.heartbeatDeadlineSeconds"}},
		{name: "apply: bad requester", method: http.MethodPatch, target: "object", query: "fieldManager=hostile", contentType: applyType, body: applied(`{"requesters":[{"name":"Bad Name"}]}`, ""), wantCode: 422, wantMessage: []string{"spec.requesters"}},
		{name: "apply: duplicate requester", method: http.MethodPatch, target: "object", query: "fieldManager=hostile", contentType: applyType, body: applied(`{"requesters":[{"name":"a.example.com"},{"name":"a.example.com"}]}`, ""), wantCode: 500, wantMessage: []string{`.spec.requesters: duplicate entries for key [name="a.example.com"]`}, inherited: applyDuplicateKey},
		{name: "apply: malformed YAML", method: http.MethodPatch, target: "object", query: "fieldManager=hostile", contentType: applyType, body: raw("spec: [\n  - ]: :"), wantCode: 400},
		{name: "apply: unknown field, strict", method: http.MethodPatch, target: "object", query: "fieldManager=hostile&" + fv, contentType: applyType, body: applied(`{"bogus":true}`, ""), wantCode: 500, wantMessage: []string{".spec.bogus: field not declared in schema"}, inherited: applyUnknownField},

		// The status rules through /status.
		{name: "status: message over 32768 bytes", method: http.MethodPut, target: "status", contentType: jsonType, body: stored(func(er *v1alpha1.EvictionRequest) { er.Status.Message = strings.Repeat("m", 32769) }), wantCode: 422, wantMessage: []string{"status.message"}},
		{name: "status: 9 conditions", method: http.MethodPatch, target: "status", contentType: mergeType, body: raw(`{"status":{"conditions":` + conditionsJSON(9) + `}}`), wantCode: 422, wantMessage: []string{"status.conditions"}},
		{name: "status: 25000 conditions", method: http.MethodPatch, target: "status", contentType: mergeType, body: raw(`{"status":{"conditions":` + conditionsJSON(25000) + `}}`), wantCode: 422, wantMessage: []string{"status.conditions"}},
		{name: "status: over 64 KiB of text", method: http.MethodPatch, target: "status", query: "fieldManager=hostile&force=true", contentType: applyType,
			body: applied("", `{"conditions":[`+
				`{"type":"Big","status":"False","reason":"R","message":"`+strings.Repeat("c", 32768)+`","lastTransitionTime":"2026-01-01T00:00:00Z"},`+
				`{"type":"Bigger","status":"False","reason":"R","message":"`+strings.Repeat("c", 32768)+`","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`), wantCode: 422, wantMessage: []string{"status"}},
		{name: "status: heartbeat an hour ahead", method: http.MethodPatch, target: "status", contentType: mergeType, body: func(_, _ *v1alpha1.EvictionRequest) string {
			return `{"status":{"heartbeatTime":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `"}}`
		}, wantCode: 422, wantMessage: []string{"status.heartbeatTime"}},
		{name: "status: unknown cancellation policy", method: http.MethodPatch, target: "status", contentType: mergeType, body: raw(`{"status":{"evictionRequestCancellationPolicy":"Maybe"}}`), wantCode: 422, wantMessage: []string{"status.evictionRequestCancellationPolicy"}},
		{name: "status: negative eviction counter", method: http.MethodPatch, target: "status", contentType: mergeType, body: raw(`{"status":{"podEvictionStatus":{"failedAPIEvictionCounter":-1}}}`), wantCode: 422, wantMessage: []string{"status.podEvictionStatus.failedAPIEvictionCounter"}},
		{name: "status: hand-off before the deadline", method: http.MethodPatch, target: "status", contentType: mergeType, body: raw(`{"status":{"activeInterceptorName":"someone.example.com"}}`), wantCode: 422, wantMessage: []string{"status.activeInterceptorName"}},
		{name: "status: condition without a reason", method: http.MethodPatch, target: "status", contentType: mergeType, body: raw(`{"status":{"conditions":[{"type":"Complete","status":"True","reason":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`), wantCode: 422, wantMessage: []string{"status.conditions[0].reason"}},
		{name: "status: wrong type", method: http.MethodPatch, target: "status", contentType: mergeType, body: raw(`{"status":{"message":42}}`), wantCode: 422, wantMessage: []string{"status.message"}},
		{name: "status: malformed", method: http.MethodPut, target: "status", contentType: jsonType, body: raw(`{`), wantCode: 400},

		// Reads with bad selectors, versions and continue tokens.
		{name: "list: unsupported field selector", method: http.MethodGet, target: "collection", query: "fieldSelector=spec.type%3DSoft", wantCode: 400, wantMessage: []string{"spec.type"}},
		{name: "list: malformed field selector", method: http.MethodGet, target: "collection", query: "fieldSelector=%3D%3D%3D", wantCode: 400, wantMessage: []string{"field"}},
		{name: "list: malformed label selector", method: http.MethodGet, target: "collection", query: "labelSelector=a+in+(b", wantCode: 400, wantMessage: []string{"requirement"}},
		{name: "list: garbage resourceVersion", method: http.MethodGet, target: "collection", query: "resourceVersion=abc", wantCode: 400, wantMessage: []string{"resourceVersion"}},
		{name: "list: garbage continue token", method: http.MethodGet, target: "collection", query: "limit=1&continue=garbage", wantCode: 400, wantMessage: []string{"continue"}},
		{name: "list: bad resourceVersionMatch", method: http.MethodGet, target: "collection", query: "resourceVersionMatch=Sometimes&resourceVersion=1", wantCode: 422, wantMessage: []string{"resourceVersionMatch"}},
		{name: "watch: unsupported field selector", method: http.MethodGet, target: "collection", query: "watch=true&fieldSelector=spec.type%3DSoft", wantCode: 400, wantMessage: []string{"spec.type"}},
		{name: "watch: garbage resourceVersion", method: http.MethodGet, target: "collection", query: "watch=true&resourceVersion=abc", wantCode: 400, wantMessage: []string{"resourceVersion"}},
		{name: "get: garbage resourceVersion", method: http.MethodGet, target: "object", query: "resourceVersion=abc", wantCode: 400, wantMessage: []string{"resourceVersion"}},
	}
}

func TestHostileInputIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "web-0")
	other := parkedPod(t, ns, "web-1")
	f.CreateEvictionRequest(t, pod, "nodemaintenance.k8s.io")
	// Wait for the controller's selection, its one write until the parked
	// interceptor's deadline, so that the request stays as it is.
	var before *v1alpha1.EvictionRequest
	framework.Eventually(t, time.Minute, "the parked interceptor selected", func(ctx context.Context) error {
		er, err := f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ptr.Deref(er.Status.ActiveInterceptorName, "") != parkedInterceptor {
			return fmt.Errorf("active interceptor %v", er.Status.ActiveInterceptorName)
		}
		before = er
		return nil
	})
	newRequest := framework.NewEvictionRequest(other, "nodemaintenance.k8s.io")

	client, err := rest.HTTPClientFor(f.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("%s/apis/coordination.k8s.io/v1alpha1/namespaces/%s/evictionrequests", f.AdminConfig.Host, ns)
	paths := map[string]string{
		"collection": base,
		"object":     base + "/" + before.Name,
		"status":     base + "/" + before.Name + "/status",
	}
	cases := hostileCases()
	if len(cases) < 60 {
		t.Fatalf("%d cases, the suite promises at least 60", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := paths[tc.target]
			if tc.query != "" {
				u += "?" + tc.query
			}
			var body io.Reader
			if tc.body != nil {
				body = strings.NewReader(tc.body(before, newRequest))
			}
			req, err := http.NewRequestWithContext(ctx, tc.method, u, body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("Accept", jsonType)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.target, resp.StatusCode, tc.wantCode, truncate(data))
			}
			var status metav1.Status
			_ = json.Unmarshal(data, &status)
			for _, want := range tc.wantMessage {
				if !strings.Contains(status.Message, want) {
					t.Errorf("the answer does not name %q: %s", want, truncate(data))
				}
			}

			// Nothing written: the stored request is unchanged, and no other
			// request appeared.
			list, err := f.EvictionRequests(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("listing after the case: %v", err)
			}
			switch {
			case len(list.Items) != 1:
				t.Errorf("the case wrote: %d requests, want the one stored", len(list.Items))
			case list.Items[0].ResourceVersion != before.ResourceVersion:
				t.Errorf("the case wrote: resourceVersion %s, was %s", list.Items[0].ResourceVersion, before.ResourceVersion)
			}
		})
	}
	// The server is still ready after all of it.
	if err := readyz(ctx, f); err != nil {
		t.Errorf("the server is not ready after the hostile input: %v", err)
	}
}

func truncate(data []byte) string {
	if len(data) > 400 {
		return string(data[:400]) + "..."
	}
	return string(data)
}

// readyz asks our server's /readyz directly, not through the aggregator.
func readyz(ctx context.Context, f *framework.Framework) error {
	config := f.ServerClientConfig(f.EvictionServer())
	client, err := rest.HTTPClientFor(config)
	if err != nil {
		return err
	}
	u, err := url.JoinPath(config.Host, "/readyz")
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %d", resp.StatusCode)
	}
	return nil
}
