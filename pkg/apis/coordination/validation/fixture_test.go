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

package validation

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

const podUID = "8d3b7c1e-5f0a-4c1b-9e7d-2a6f4b8c9d01"

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func validEvictionRequest() *coordination.EvictionRequest {
	return &coordination.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name:              podUID,
			Namespace:         "default",
			ResourceVersion:   "1",
			CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
		},
		Spec: coordination.EvictionRequestSpec{
			Type:                     coordination.Soft,
			Target:                   coordination.EvictionTarget{PodRef: &coordination.LocalPodReference{Name: "web-0", UID: podUID}},
			Requesters:               []coordination.Requester{{Name: "nodemaintenance.k8s.io"}},
			Interceptors:             []coordination.Interceptor{{Name: "a.example.com"}, {Name: "b.example.com"}, {Name: "c.example.com"}},
			HeartbeatDeadlineSeconds: ptr.To[int32](600),
		},
		Status: coordination.EvictionRequestStatus{
			EvictionRequestCancellationPolicy: ptr.To(coordination.Allow),
		},
	}
}

// errorKeys reduces an error list to "<type> <field>" pairs, the two things a
// client can rely on; the details are for humans.
func errorKeys(errs field.ErrorList) []string {
	keys := make([]string, 0, len(errs))
	for _, err := range errs {
		keys = append(keys, fmt.Sprintf("%s %s", string(err.Type), err.Field))
	}
	return keys
}

func expectErrors(t *testing.T, got field.ErrorList, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, errorKeys(got)); diff != "" {
		t.Errorf("unexpected errors (-want +got):\n%s\nall errors: %v", diff, got)
	}
}

func requesters(n int) []coordination.Requester {
	list := make([]coordination.Requester, n)
	for i := range list {
		list[i].Name = fmt.Sprintf("requester-%d.example.com", i)
	}
	return list
}

func interceptors(n int) []coordination.Interceptor {
	list := make([]coordination.Interceptor, n)
	for i := range list {
		list[i].Name = fmt.Sprintf("interceptor-%d.example.com", i)
	}
	return list
}
