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

package validation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
	"github.com/evictionrequest/apiserver/pkg/registry/coordination/evictionrequest"
)

// The fuzz targets take request bodies through what the server does with
// them: decode as v1alpha1 with defaults into the internal type, the
// strategy's preparation, validation. Nothing may panic, and an object that
// validates must come back the same from storage (encoded as v1alpha1 and
// decoded again) and still validate.

var (
	fuzzNow      = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	gvk          = v1alpha1.SchemeGroupVersion.WithKind("EvictionRequest")
	decoder      = internalscheme.Codecs.UniversalDecoder(coordination.SchemeGroupVersion)
	storageCodec = internalscheme.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion)
	strategy     = evictionrequest.NewStrategy(internalscheme.Scheme)
)

const seedEvictionRequest = `{
  "apiVersion": "coordination.k8s.io/v1alpha1", "kind": "EvictionRequest",
  "metadata": {"name": "8d3b7c1e-5f0a-4c1b-9e7d-2a6f4b8c9d01", "namespace": "default", "labels": {"app": "web"}},
  "spec": {"type": "Soft", "target": {"podRef": {"name": "web-0", "uid": "8d3b7c1e-5f0a-4c1b-9e7d-2a6f4b8c9d01"}},
    "requesters": [{"name": "nodemaintenance.k8s.io"}],
    "interceptors": [{"name": "a.example.com"}, {"name": "b.example.com"}],
    "heartbeatDeadlineSeconds": 600}
}`

const seedStatus = `{
  "apiVersion": "coordination.k8s.io/v1alpha1", "kind": "EvictionRequest",
  "metadata": {"name": "8d3b7c1e-5f0a-4c1b-9e7d-2a6f4b8c9d01", "namespace": "default", "resourceVersion": "5"},
  "spec": {"type": "Soft", "target": {"podRef": {"name": "web-0", "uid": "8d3b7c1e-5f0a-4c1b-9e7d-2a6f4b8c9d01"}},
    "requesters": [{"name": "nodemaintenance.k8s.io"}],
    "interceptors": [{"name": "a.example.com"}, {"name": "b.example.com"}]},
  "status": {"activeInterceptorName": "b.example.com", "heartbeatTime": "2026-11-22T11:59:00Z",
    "message": "migrating", "evictionRequestCancellationPolicy": "Forbid",
    "podEvictionStatus": {"failedAPIEvictionCounter": 2},
    "conditions": [{"type": "Complete", "status": "False", "reason": "InProgress", "message": "", "lastTransitionTime": "2026-11-22T11:00:00Z"}]}
}`

// decode decodes a request body as the server does, nil when it is not an
// EvictionRequest.
func decode(data []byte) *coordination.EvictionRequest {
	obj, _, err := decoder.Decode(data, &gvk, nil)
	if err != nil {
		return nil
	}
	er, ok := obj.(*coordination.EvictionRequest)
	if !ok {
		return nil
	}
	return er
}

// roundTrip stores er as the server does and reads it back.
func roundTrip(t *testing.T, er *coordination.EvictionRequest) *coordination.EvictionRequest {
	t.Helper()
	data, err := runtime.Encode(storageCodec, er)
	if err != nil {
		t.Fatalf("encoding a valid object: %v", err)
	}
	back := decode(data)
	if back == nil {
		t.Fatalf("a valid object does not decode after encoding: %s", data)
	}
	if !apiequality.Semantic.DeepEqual(er, back) {
		t.Fatalf("a valid object changed in a round trip:\nbefore %#v\nafter  %#v", er, back)
	}
	return back
}

func ctx() context.Context {
	return genericapirequest.WithNamespace(context.Background(), "default")
}

func FuzzCreate(f *testing.F) {
	f.Add([]byte(seedEvictionRequest))
	f.Add([]byte(strings.Replace(seedEvictionRequest, `"Soft"`, `"Hard"`, 1)))
	f.Add([]byte(strings.Replace(seedEvictionRequest, `600`, `-1`, 1)))
	f.Add([]byte(seedStatus))
	f.Add([]byte(`{"spec": {"target": {}}}`))
	f.Add([]byte(`{"metadata": {"generateName": "x-"}, "spec": {"requesters": [{"name": ""}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		er := decode(data)
		if er == nil {
			return
		}
		strategy.PrepareForCreate(ctx(), er)
		if len(strategy.Validate(ctx(), er)) > 0 {
			return
		}
		if errs := strategy.Validate(ctx(), roundTrip(t, er)); len(errs) > 0 {
			t.Fatalf("a valid object no longer validates after a round trip: %v", errs)
		}
	})
}

// stored is the create seed as stored, with a resourceVersion.
var stored = strings.Replace(seedEvictionRequest, `"namespace": "default",`, `"namespace": "default", "resourceVersion": "5",`, 1)

// FuzzUpdate writes fuzzed objects over a stored valid request, through the
// main resource.
func FuzzUpdate(f *testing.F) {
	f.Add([]byte(stored))
	f.Add([]byte(strings.Replace(stored, `"web-0"`, `"web-1"`, 1)))
	f.Add([]byte(strings.Replace(stored, `[{"name": "nodemaintenance.k8s.io"}]`, `[]`, 1)))
	f.Add([]byte(seedStatus))
	fuzzWriteOver(f, stored, strategy.PrepareForUpdate, strategy.ValidateUpdate)
}

// FuzzStatusUpdate writes fuzzed objects over a stored request with an
// active interceptor, through /status.
func FuzzStatusUpdate(f *testing.F) {
	f.Add([]byte(seedStatus))
	f.Add([]byte(stored))
	f.Add([]byte(strings.Replace(seedStatus, `"b.example.com", "heartbeatTime"`, `"a.example.com", "heartbeatTime"`, 1)))
	f.Add([]byte(strings.Replace(seedStatus, `"failedAPIEvictionCounter": 2`, `"failedAPIEvictionCounter": 1`, 1)))
	status := evictionrequest.NewStatusStrategy(strategy, fixedClock{})
	fuzzWriteOver(f, seedStatus, status.PrepareForUpdate, status.ValidateUpdate)
}

// fuzzWriteOver fuzzes writes over the stored object: a write that
// validates must still validate once stored and read back.
func fuzzWriteOver(f *testing.F, storedJSON string,
	prepare func(context.Context, runtime.Object, runtime.Object),
	validate func(context.Context, runtime.Object, runtime.Object) field.ErrorList) {
	f.Fuzz(func(t *testing.T, data []byte) {
		oldER, newER := decode([]byte(storedJSON)), decode(data)
		if newER == nil {
			return
		}
		prepare(ctx(), newER, oldER)
		if len(validate(ctx(), newER, oldER)) > 0 {
			return
		}
		if errs := validate(ctx(), roundTrip(t, newER), oldER); len(errs) > 0 {
			t.Fatalf("a valid write no longer validates after a round trip: %v", errs)
		}
	})
}

// FuzzPodInterceptorsAnnotation parses any annotation value: a list that
// validates is made of valid names and reads back the same once written out
// again.
func FuzzPodInterceptorsAnnotation(f *testing.F) {
	for _, seed := range []string{"", "a.example.com", " a.example.com , b.example.com ", "a,,b", "nodemaintenance.k8s.io,x.k8s.io", "A.Example.com", strings.Repeat("a,", 120)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		names := v1alpha1.PodInterceptorNames(map[string]string{v1alpha1.PodInterceptorsAnnotation: value})
		interceptors := make([]coordination.Interceptor, len(names))
		for i, name := range names {
			interceptors[i] = coordination.Interceptor{Name: name}
		}
		if len(validation.ValidateInterceptors(interceptors, field.NewPath("spec", "interceptors"))) > 0 {
			return
		}
		again := v1alpha1.PodInterceptorNames(map[string]string{v1alpha1.PodInterceptorsAnnotation: strings.Join(names, ",")})
		if strings.Join(again, ",") != strings.Join(names, ",") || len(again) != len(names) {
			t.Fatalf("%q parsed as %q, written out and parsed again as %q", value, names, again)
		}
	})
}

// fixedClock is the status strategy's now in the fuzz targets.
type fixedClock struct{}

func (fixedClock) Now() time.Time                  { return fuzzNow }
func (fixedClock) Since(t time.Time) time.Duration { return fuzzNow.Sub(t) }

// TestFuzzSeedsValidate keeps the seeds of the fuzz targets on the path that
// checks round trips: they must validate.
func TestFuzzSeedsValidate(t *testing.T) {
	er := decode([]byte(seedEvictionRequest))
	if er == nil {
		t.Fatal("the create seed does not decode")
	}
	strategy.PrepareForCreate(ctx(), er)
	if errs := strategy.Validate(ctx(), er); len(errs) > 0 {
		t.Errorf("the create seed does not validate: %v", errs)
	}
	oldER, newER := decode([]byte(stored)), decode([]byte(stored))
	strategy.PrepareForUpdate(ctx(), newER, oldER)
	if errs := strategy.ValidateUpdate(ctx(), newER, oldER); len(errs) > 0 {
		t.Errorf("the update seed does not validate: %v", errs)
	}
	oldER, newER = decode([]byte(seedStatus)), decode([]byte(seedStatus))
	status := evictionrequest.NewStatusStrategy(strategy, fixedClock{})
	status.PrepareForUpdate(ctx(), newER, oldER)
	if errs := status.ValidateUpdate(ctx(), newER, oldER); len(errs) > 0 {
		t.Errorf("the status seed does not validate: %v", errs)
	}
}
