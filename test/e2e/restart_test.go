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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// TestServerRestartKeepsEveryObject restarts evictionrequest-apiserver (not
// in parallel with other tests, which would see it go away) and compares
// every EvictionRequest of the cluster before and after.
func TestServerRestartKeepsEveryObject(t *testing.T) {
	ctx := t.Context()
	ns := f.NewNamespace(t)
	for _, name := range []string{"a-0", "b-0", "c-0"} {
		er := f.CreateEvictionRequest(t, parkedPod(t, ns, name), "nodemaintenance.k8s.io")
		setStatus(t, ns, er.Name, func(er *v1alpha1.EvictionRequest) {
			// With the parked interceptor active and heartbeating, the
			// controller has nothing to change while the server restarts.
			er.Status.ActiveInterceptorName = ptr.To(parkedInterceptor)
			er.Status.Message = "before the restart"
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(time.Now().Truncate(time.Second)))
		})
	}
	before, err := f.EvictionRequests(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if err := f.RestartServers(ctx, f.EvictionServer()); err != nil {
		t.Fatalf("restarting evictionrequest-apiserver: %v", err)
	}

	after, err := f.EvictionRequests(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(byName(before.Items), byName(after.Items)); diff != "" {
		t.Errorf("EvictionRequests changed across a restart (-before +after):\n%s", diff)
	}
	if len(before.Items) < 3 {
		t.Errorf("listed %d EvictionRequests before the restart, want at least the 3 of this test", len(before.Items))
	}
}

func byName(items []v1alpha1.EvictionRequest) map[string]v1alpha1.EvictionRequest {
	m := make(map[string]v1alpha1.EvictionRequest, len(items))
	for _, er := range items {
		m[er.Namespace+"/"+er.Name] = er
	}
	return m
}
