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
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
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
