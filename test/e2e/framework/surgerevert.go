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
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/pkg/surge"
)

// CheckSurgeReverted checks, once the request for the pod original of the
// one-replica Deployment app was withdrawn in the middle of a surge, that
// the surge was undone: the Deployment is back at one replica, original
// its only pod, without the surge's annotations, and a SurgeReverted event
// on the Deployment says so.
func (f *Framework) CheckSurgeReverted(t *testing.T, ns, app string, original types.UID) {
	t.Helper()
	f.WaitForReplicas(t, ns, app, 1)
	pods := f.PodsOf(t, ns, app)
	if len(pods) != 1 || pods[0].UID != original {
		t.Fatalf("pods after the withdrawal: %v, want the original", PodNames(pods))
	}
	for _, key := range []string{surge.DeletionCostAnnotation, surge.OriginalDeletionCostAnnotation, surge.MarkedByAnnotation} {
		if v, ok := pods[0].Annotations[key]; ok {
			t.Errorf("the original pod keeps annotation %s=%q", key, v)
		}
	}
	if events := f.EventReasons(t, ns, "Deployment", app); !slices.Contains(events, surge.EventSurgeReverted) {
		t.Errorf("Deployment events %v lack %s", events, surge.EventSurgeReverted)
	}
}
