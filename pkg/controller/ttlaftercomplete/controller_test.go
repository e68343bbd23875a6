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

package ttlaftercomplete

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/install"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	registry "github.com/evictionrequest/apiserver/pkg/registry/coordination/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// completedAt is a request of a pod, complete since at.
func completedAt(name string, at time.Time) *v1alpha1.EvictionRequest {
	er := wrappers.MakeEvictionRequest(wrappers.MakePod(name).Obj(), "drain.example.com").Complete(v1alpha1.CompleteReasonPodDeleted, "gone").Obj()
	er.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at)
	er.ResourceVersion = "7"
	return er
}

// A completed request is kept until its time to live passes, the
// controller looking again exactly then, and deleted once it has, with the
// UID and resourceVersion the cache saw as preconditions; a request still
// in progress is never deleted.
func TestCompletedRequestsAreDeletedAfterTheirTTL(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start.Add(20 * time.Minute))
	done, running := completedAt("web-0", start), wrappers.MakeEvictionRequest(wrappers.MakePod("web-1").Obj(), "drain.example.com").Obj()
	client := erfake.NewClientset(done, running)
	// Cached as evictionrequest-apiserver caches requests.
	factory := cachetest.EvictionRequestInformers(client, cachetransform.StripMetadataKeeping())
	informer := factory.Coordination().V1alpha1().EvictionRequests()
	c, err := New(t.Context(), client.CoordinationV1alpha1(), informer, time.Hour, clk, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(t.Context().Done(), informer.Informer().HasSynced) {
		t.Fatal("the cache did not sync")
	}
	client.ClearActions()
	for _, er := range []*v1alpha1.EvictionRequest{done, running} {
		left, err := c.sync(t.Context(), er.Namespace+"/"+er.Name)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]time.Duration{done.Name: 40 * time.Minute, running.Name: 0}[er.Name]; left != want {
			t.Errorf("%s: looked at again in %s, want %s", er.Name, left, want)
		}
	}
	if actions := client.Actions(); len(actions) != 0 {
		t.Fatalf("before the TTL the controller wrote %v", actions)
	}
	// A request deleted meanwhile is done with, not retried.
	if left, err := c.sync(t.Context(), done.Namespace+"/gone"); err != nil || left != 0 {
		t.Errorf("a request gone from the cache: looked at again in %s (%v), want never", left, err)
	}

	clk.Step(40 * time.Minute)
	for _, er := range []*v1alpha1.EvictionRequest{done, running} {
		if _, err := c.sync(t.Context(), er.Namespace+"/"+er.Name); err != nil {
			t.Fatal(err)
		}
	}
	actions := client.Actions()
	if len(actions) != 1 || actions[0].GetVerb() != "delete" {
		t.Fatalf("actions %v, want one delete", actions)
	}
	deleted := actions[0].(clienttesting.DeleteActionImpl)
	if p := deleted.DeleteOptions.Preconditions; deleted.Name != done.Name || p == nil || *p.UID != done.UID || *p.ResourceVersion != "7" {
		t.Errorf("deleted %s with preconditions %+v, want %s at its UID and resourceVersion 7", deleted.Name, p, done.Name)
	}
}

// storedStatus is what evictionrequest-apiserver stores when a client writes
// the status of stored as written does, at now: its status strategy's work.
func storedStatus(t *testing.T, stored, written *v1alpha1.EvictionRequest, now time.Time) *v1alpha1.EvictionRequest {
	t.Helper()
	scheme := runtime.NewScheme()
	install.Install(scheme)
	var oldER, newER coordination.EvictionRequest
	if err := scheme.Convert(stored, &oldER, nil); err != nil {
		t.Fatal(err)
	}
	if err := scheme.Convert(written, &newER, nil); err != nil {
		t.Fatal(err)
	}
	strategy := registry.NewStatusStrategy(registry.NewStrategy(scheme), testingclock.NewFakePassiveClock(now))
	strategy.PrepareForUpdate(t.Context(), &newER, &oldER)
	if errs := strategy.ValidateUpdate(t.Context(), &newER, &oldER); len(errs) > 0 {
		t.Fatalf("the server refuses the write: %v", errs)
	}
	out := &v1alpha1.EvictionRequest{}
	if err := scheme.Convert(&newER, out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// A completion a client dated 2020 counts from when the server saw the
// request complete: the TTL controller keeps it for its whole time to live
// instead of deleting it at once.
func TestTheTTLCountsFromTheTimeTheServerRecorded(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(now)
	running := wrappers.MakeEvictionRequest(wrappers.MakePod("web-0").Obj(), "drain.example.com").Obj()
	running.ResourceVersion = "7"
	written := completedAt("web-0", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	done := storedStatus(t, running, written, now)
	client := erfake.NewClientset(done)
	factory := cachetest.EvictionRequestInformers(client, cachetransform.StripMetadataKeeping())
	informer := factory.Coordination().V1alpha1().EvictionRequests()
	c, err := New(t.Context(), client.CoordinationV1alpha1(), informer, time.Hour, clk, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(t.Context().Done(), informer.Informer().HasSynced) {
		t.Fatal("the cache did not sync")
	}
	client.ClearActions()

	left, err := c.sync(t.Context(), done.Namespace+"/"+done.Name)
	if err != nil {
		t.Fatal(err)
	}
	if left != time.Hour {
		t.Errorf("looked at again in %s, want the whole TTL, 1h", left)
	}
	if actions := client.Actions(); len(actions) != 0 {
		t.Errorf("a request the server saw complete a moment ago: %v, want it kept", actions)
	}
}
