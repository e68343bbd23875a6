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

package participant

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// Status says when the server created the request and when it last
// recorded a write of the participant (the newest of its managedFields
// entries), times no writer chooses; nil without an entry of its own.
func TestStatusSaysWhenTheServerRecordedTheParticipantsWrite(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	created := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	joined, annotated := created.Add(time.Hour), created.Add(2*time.Hour)
	entry := func(manager string, op metav1.ManagedFieldsOperationType, at time.Time) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Time: &metav1.Time{Time: at}}
	}
	pod := wrappers.MakePod("web-0").Obj()
	er := wrappers.MakeEvictionRequest(pod, "other.example.com", "drain.example.com").Created(created).Obj()
	er.ManagedFields = []metav1.ManagedFieldsEntry{
		entry("other.example.com", metav1.ManagedFieldsOperationApply, created),
		entry("drain.example.com", metav1.ManagedFieldsOperationApply, joined),
		entry("drain.example.com", metav1.ManagedFieldsOperationUpdate, annotated),
		entry("kubectl-annotate", metav1.ManagedFieldsOperationUpdate, annotated.Add(time.Hour)),
	}
	evr := erfake.NewClientset(er)
	for name, want := range map[string]*time.Time{"drain.example.com": &annotated, "descheduler.example.com": nil} {
		p, err := New(evictionapi.Coordination, name, k8sfake.NewClientset(pod), evr, requester.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Status(ctx, pod.Namespace, pod.UID)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Created.Equal(created) {
			t.Errorf("%s: created %v, want %v", name, s.Created, created)
		}
		if (want == nil) != (s.Written == nil) || (want != nil && !s.Written.Equal(*want)) {
			t.Errorf("%s: written %v, want %v", name, s.Written, want)
		}
	}
}
