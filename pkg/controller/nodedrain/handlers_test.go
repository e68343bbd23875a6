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

package nodedrain

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

func TestNodeUpdatesThatMatter(t *testing.T) {
	base := marked().Condition(corev1.NodeDrainInProgress, corev1.ConditionTrue, ReasonDrainStarted, "2 pods left").Obj()
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Node)
		want   bool
	}{
		{"a kubelet heartbeat", func(n *corev1.Node) { n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(start) }, false},
		{"the drain annotation removed", func(n *corev1.Node) { n.Annotations = nil }, true},
		{"the drain's condition erased", func(n *corev1.Node) { n.Status.Conditions = n.Status.Conditions[:1] }, true},
		{"the node uncordoned by someone", func(n *corev1.Node) { n.Spec.Unschedulable = !n.Spec.Unschedulable }, true},
		{"a shutdown", func(n *corev1.Node) { n.Status.Conditions[0] = shuttingDown().Status.Conditions[0] }, true},
		{"GracefulNodeShutdownInProgress set", func(n *corev1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeGracefulNodeShutdownInProgress, Status: corev1.ConditionTrue})
		}, true},
		{"MaintenancePlanned set", func(n *corev1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMaintenancePlanned, Status: corev1.ConditionTrue})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, Options{DrainOnMaintenancePlanned: true})
			updated := base.DeepCopy()
			tc.mutate(updated)
			f.controller.updateNode(base, updated)
			if got := f.controller.queue.Len() == 1; got != tc.want {
				t.Errorf("enqueued %v, want %v", got, tc.want)
			}
		})
	}
}

// The drain of a node waits for the requests of its gone pods to complete:
// a request that completes, or is collected, after its pod is gone wakes the
// node, which its pod no longer can.
func TestARequestCompletedAfterItsPodWentWakesTheDrain(t *testing.T) {
	f := newFixture(t)
	web := pod("web-0").Obj()
	f.add(marked().Obj(), web)
	f.sync()
	if err := f.pods.Delete(web); err != nil {
		t.Fatal(err)
	}
	f.sync()
	if c := drain.FindNodeCondition(f.refreshNode(), corev1.NodeDrained); c == nil || c.Status != corev1.ConditionFalse {
		t.Fatalf("Drained = %+v while the request of the gone pod is not complete", c)
	}
	for f.controller.queue.Len() > 0 {
		name, _ := f.controller.queue.Get()
		f.controller.queue.Done(name)
	}
	f.controller.enqueueRequest(wrappers.MakeEvictionRequest(web, me).Complete(v1alpha1.CompleteReasonPodDeleted, "gone").Obj())
	if got := f.controller.queue.Len(); got != 1 {
		t.Errorf("the completion of a gone pod's request enqueued %d nodes, want its node", got)
	}
}
