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
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// The pod-deletion-cost annotation is honored on a best-effort basis: a
// ReplicaSet controller whose cache has not seen the mark yet removes the
// replacement on the scale-back and keeps the pod. The test builds that
// state (the request held under Forbid, the pod marked, the Deployment back
// at one replica and no surge) before the interceptor starts: it surges
// again rather than wait for a removal that never comes.
func TestSurgeAgainWhenTheReplicaSetKeptThePod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "surge-kept.e2e.example.com"
	original := podOnCordonedNode(t, ns, name, nil)
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, &original); err != nil {
		t.Fatal(err)
	}
	uid := string(original.UID)
	f.WaitUntilActive(t, ns, uid, name)
	setStatus(t, ns, uid, func(er *v1alpha1.EvictionRequest) {
		er.Status.HeartbeatTime = ptr.To(metav1.Now())
		er.Status.EvictionRequestCancellationPolicy = ptr.To(v1alpha1.Forbid)
	})
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		surge.DeletionCostAnnotation: "-2147483648", surge.OriginalDeletionCostAnnotation: "", surge.MarkedByAnnotation: name,
	}}})
	if _, err := f.Kube.CoreV1().Pods(ns).Patch(ctx, original.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	startOwnSurgeInterceptor(t, ns, name)
	waitForReplacementBySurge(t, ns, original)
	f.WaitForEvents(t, ns, "", "db", surge.EventSurgeRetried, surge.EventSurgeStarted, surge.EventSurgeScaledDown)
}

// A ReplicaSet that has no reason to prefer the marked pod (every pod has
// the lowest deletion cost from the template, and the replacements share a
// node, which the ReplicaSet empties first) keeps it on every scale-back:
// after a bounded number of surges the interceptor passes the request on
// and the pod is evicted through the API.
func TestSurgePassesOnWhenTheReplicaSetKeepsThePod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const name = "surge-kept-always.e2e.example.com"
	startOwnSurgeInterceptor(t, ns, name)
	original := podOnCordonedNode(t, ns, name, func(d *appsv1.Deployment) {
		d.Spec.Template.Annotations[surge.DeletionCostAnnotation] = "-2147483648"
	})
	if _, err := f.Kube.AppsV1().Deployments(ns).Patch(ctx, "db", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForReplicas(t, ns, "db", 2)
	if _, err := newRequester(t, "nodemaintenance.k8s.io").Request(ctx, &original); err != nil {
		t.Fatal(err)
	}

	uid := string(original.UID)
	er := f.WaitForCompletion(t, ns, uid, v1alpha1.CompleteReasonPodDeleted)
	// Passed on with no removal in flight: a requester could have
	// withdrawn while the Eviction API was refused.
	if policy := ptr.Deref(er.Status.EvictionRequestCancellationPolicy, ""); policy != v1alpha1.Allow {
		t.Errorf("cancellation policy after the pass-on: %q, want Allow", policy)
	}
	f.WaitForEvents(t, ns, "", uid, coordinationcontroller.EventEvicted)
	f.WaitForEvents(t, ns, "", "db", surge.EventSurgeRetried, surge.EventSurgePassedOn)
	if got := f.EventMessages(t, ns, "", "db", surge.EventSurgePassedOn); !strings.Contains(got, "kept pod "+original.Name+" after 3 scale-backs") {
		t.Errorf("SurgePassedOn events: %q, want one naming the kept pod and the scale-backs", got)
	}
	f.WaitForReplicas(t, ns, "db", 2)
}
