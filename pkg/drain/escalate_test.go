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

package drain

import (
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
)

// An escalation's eviction asks the eviction API bridge to skip the pod's
// participants, saying why, and carries the pod's UID as a precondition.
func TestClientEscalatorEvictAsksToSkipTheParticipants(t *testing.T) {
	pod := wrappers.MakePod("db-0").UID("uid-db-0").Obj()
	client := fake.NewClientset(pod)
	var sent *policyv1.Eviction
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() == "eviction" {
			sent = action.(clienttesting.CreateAction).GetObject().(*policyv1.Eviction)
		}
		return false, nil, nil
	})
	if err := (ClientEscalator{Pods: client.CoreV1(), CallTimeout: time.Second}).Evict(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if sent == nil {
		t.Fatal("no eviction sent")
	}
	if reason, ok := policyutil.SkipsParticipants(sent); !ok || reason != EscalationReason {
		t.Errorf("the eviction's annotations %v, want %s=%q", sent.Annotations, policyutil.SkipParticipantsAnnotation, EscalationReason)
	}
	if p := sent.DeleteOptions; p == nil || p.Preconditions == nil || p.Preconditions.UID == nil || *p.Preconditions.UID != pod.UID {
		t.Errorf("the eviction's delete options %+v, want the pod's UID as a precondition", p)
	}
}
