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

package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestResponderOrder(t *testing.T) {
	responder := func(name string, priority int32) lifecyclev1alpha1.TargetResponder {
		return lifecyclev1alpha1.TargetResponder{Name: name, Priority: ptr.To(priority)}
	}
	responders := []lifecyclev1alpha1.TargetResponder{
		responder(Evictor, EvictorPriority),
		responder("b.example.com/x", 5000),
		responder("a.example.org/x", 5000),
		responder("a.example.com/y", 5000),
		responder("a.example.com/x", 5000),
		responder("z.example.com/x", 10000),
	}
	ResponderOrder(responders)
	var got []string
	for _, r := range responders {
		got = append(got, r.Name)
	}
	// Priority first; on a tie, com before org (the top domain), then
	// a.example.com before b.example.com, then the key.
	want := []string{"z.example.com/x", "a.example.com/x", "a.example.com/y", "b.example.com/x", "a.example.org/x", Evictor}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestIsHeldBy(t *testing.T) {
	const me = "surge.example.com/deployments"
	ev := &lifecyclev1alpha1.Eviction{Status: lifecyclev1alpha1.EvictionStatus{
		TargetResponders: []lifecyclev1alpha1.TargetResponder{{Name: me, State: lifecyclev1alpha1.ResponderStateActive}},
		Responders:       []lifecyclev1alpha1.ResponderStatus{{Name: me}},
	}}
	if !IsHeldBy(ev, me) || IsHeldBy(ev, "other.example.com/x") || IsHeldBy(ev, "") {
		t.Error("an active responder does not hold its eviction, or another one does")
	}
	ev.Status.Responders[0].CompletionTime = ptr.To(metav1.Now())
	if IsHeldBy(ev, me) {
		t.Error("a responder that completed still holds the eviction")
	}
}

func TestValidateParticipantName(t *testing.T) {
	for name, ok := range map[string]bool{
		"acme.io/drain":                        true,
		"evictionrequest.github.io/node-drain": true,
		"drain":                                false,
		"/drain":                               false,
		"acme.io/bad name":                     false,
		"nodes.k8s.io/drain":                   false,
		"k8s.io/drain":                         false,
		"x.kubernetes.io/drain":                false,
		"notk8s.io/drain":                      true,
	} {
		if err := ValidateParticipantName(name); (err == nil) != ok {
			t.Errorf("ValidateParticipantName(%q) = %v, want valid: %v", name, err, ok)
		}
	}
}
