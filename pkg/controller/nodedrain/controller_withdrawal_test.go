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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

func TestUnmarkingWithdrawsAndUncordons(t *testing.T) {
	f := newFixture(t)
	f.add(marked().Obj(), pod("web-0").Obj(), pod("db-0").Obj())
	f.sync()
	// Another requester wants db-0 out too; the drain must not drop it.
	other, err := requester.New("descheduler.example.com", f.evr, f.kube.CoreV1(), requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Request(f.ctx, pod("db-0").Obj()); err != nil {
		t.Fatal(err)
	}
	f.refreshRequests()
	f.events()

	n := f.refreshNode()
	delete(n.Annotations, DrainAnnotation)
	if _, err := f.kube.CoreV1().Nodes().Update(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refreshNode()
	f.sync()

	n = f.refreshNode()
	if n.Spec.Unschedulable || n.Annotations[drain.CordonedByAnnotation] != "" {
		t.Errorf("node after the drain ended: unschedulable %v, annotations %v", n.Spec.Unschedulable, n.Annotations)
	}
	if drain.FindNodeCondition(n, corev1.NodeDrainInProgress) != nil || drain.FindNodeCondition(n, corev1.NodeDrained) != nil || drain.FindNodeCondition(n, corev1.NodeReady) == nil {
		t.Errorf("conditions after the drain ended: %+v", n.Status.Conditions)
	}
	if diff := cmp.Diff(map[string][]string{"web-0": {}, "db-0": {"descheduler.example.com"}}, f.requesters()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{EventUncordoned, EventDrainStopped}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestANodeAnAdminCordonedStaysCordoned(t *testing.T) {
	f := newFixture(t)
	f.add(marked().Unschedulable().Obj(), pod("web-0").Obj())
	f.sync()
	n := f.refreshNode()
	if n.Annotations[drain.CordonedByAnnotation] != "" {
		t.Errorf("the drain claimed a node an admin cordoned: %v", n.Annotations)
	}
	delete(n.Annotations, DrainAnnotation)
	if _, err := f.kube.CoreV1().Nodes().Update(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refreshNode()
	f.refreshRequests()
	f.sync()
	if n := f.refreshNode(); !n.Spec.Unschedulable {
		t.Error("the drain uncordoned a node an admin cordoned")
	}
}

func TestAForbiddenWithdrawalIsRetried(t *testing.T) {
	f := newFixture(t)
	db := pod("db-0").Obj()
	f.add(node().Annotation(drain.CordonedByAnnotation, me).Unschedulable().Obj(), db)
	f.add(wrappers.MakeEvictionRequest(db, me).Policy(v1alpha1.Forbid).Active("migrator.example.com").Obj())
	if requeue := f.sync(); requeue != forbiddenRetry {
		t.Errorf("sync() requeues after %s, want %s", requeue, forbiddenRetry)
	}
	if n := f.refreshNode(); !n.Spec.Unschedulable {
		t.Error("the node was uncordoned while a request could not be withdrawn")
	}
	if diff := cmp.Diff(map[string][]string{"db-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{EventWithdrawForbidden}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
