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

package requester

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// callAnnotations are a requester's annotations of one call, and of the
// next.
var (
	firstCall = map[string]string{"example.com/last-call": "2026-11-25T12:00:00Z", "example.com/callers": "alice"}
	nextCall  = map[string]string{"example.com/last-call": "2026-11-25T12:05:00Z", "example.com/callers": "alice,bob"}
)

// writesOf are the writes among actions.
func writesOf(actions []clienttesting.Action) []clienttesting.Action {
	var writes []clienttesting.Action
	for _, a := range actions {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			writes = append(writes, a)
		}
	}
	return writes
}

// The annotations of a requester's call are written with the request, in
// the one write that creates it: there is no moment the request exists
// without them. A later call replaces them, even where another writer under
// the requester's name (an older release's merge patch) set them last.
func TestRequestWithAnnotationsWritesThemWithTheRequest(t *testing.T) {
	f := newFixture(t)
	r := f.requester("eviction-bridge.example.com", Options{})
	er, err := r.RequestWithAnnotations(f.ctx, testPod, firstCall)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(firstCall, er.Annotations); diff != "" {
		t.Errorf("annotations of the request as created (-want +got):\n%s", diff)
	}
	if writes := writesOf(f.evr.Actions()); len(writes) != 1 {
		t.Errorf("writes %v, want the one apply", writes)
	}
	// An older release annotated its requests with a merge patch: an
	// update under the requester's name, which owns them now.
	if _, err := f.evr.CoordinationV1alpha1().EvictionRequests(ns).Patch(f.ctx, er.Name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"example.com/last-call":"2026-11-25T12:01:00Z"}}}`), metav1.PatchOptions{FieldManager: r.FieldManager()}); err != nil {
		t.Fatal(err)
	}
	if er, err = r.RequestWithAnnotations(f.ctx, testPod, nextCall); err != nil {
		t.Fatalf("a call after another writer's annotations: %v", err)
	}
	if diff := cmp.Diff(nextCall, er.Annotations); diff != "" {
		t.Errorf("annotations after the next call (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"eviction-bridge.example.com"}, requesterNames(er)); diff != "" {
		t.Errorf("requesters (-want +got):\n%s", diff)
	}
}

// On lifecycle.k8s.io, the annotations come with the requester's own
// request, and stay when it withdraws: they say who asked, after the fact.
func TestLifecycleRequestWithAnnotationsAndWithdraw(t *testing.T) {
	kube := k8sfake.NewClientset(testPod.DeepCopy())
	r, err := NewLifecycle("example.com/eviction-bridge", kube, Options{})
	if err != nil {
		t.Fatal(err)
	}
	er, err := r.RequestWithAnnotations(t.Context(), testPod, firstCall)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(firstCall, er.Annotations); diff != "" {
		t.Errorf("annotations of the request as created (-want +got):\n%s", diff)
	}
	if writes := writesOf(kube.Actions()); len(writes) != 1 {
		t.Errorf("writes %v, want the one apply", writes)
	}
	if er, err = r.Withdraw(t.Context(), ns, testPod.UID); err != nil {
		t.Fatal(err)
	}
	if er.Spec.Intent != lifecyclev1alpha1.EvictionRequestIntentWithdrawn {
		t.Errorf("intent %s, want Withdrawn", er.Spec.Intent)
	}
	if diff := cmp.Diff(firstCall, er.Annotations); diff != "" {
		t.Errorf("annotations after the withdrawal (-want +got):\n%s", diff)
	}
}
