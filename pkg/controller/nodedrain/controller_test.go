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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// As kubectl drain, the declarative drain refuses pods that declare no
// controller and pods with emptyDir volumes, and then changes nothing;
// the Node's annotations override each refusal.
func TestBarePodsAndEmptyDirPodsRefuseTheDrain(t *testing.T) {
	f := newFixture(t)
	rs := "uid-rs"
	f.add(node().Annotation(DrainAnnotation, "true").Obj(),
		pod("bare").Obj(), pod("cache").OwnedBy("apps/v1", "ReplicaSet", "cache", types.UID(rs)).EmptyDir("scratch").Obj())
	f.sync()
	n := f.refreshNode()
	if n.Spec.Unschedulable || len(f.requesters()) != 0 {
		t.Fatalf("a refused drain changed something: unschedulable %v, requests %v", n.Spec.Unschedulable, f.requesters())
	}
	inProgress := drain.FindNodeCondition(n, corev1.NodeDrainInProgress)
	want := "The drain refuses to start, and changed nothing: cannot request the eviction of Pods that declare no controller (annotate the node " +
		ForceAnnotation + "=true to override): shop/bare; cannot request the eviction of Pods with local storage (annotate the node " +
		DeleteEmptyDirDataAnnotation + "=true to override): shop/cache."
	if inProgress == nil || inProgress.Reason != ReasonDrainRefused || inProgress.Message != want {
		t.Errorf("DrainInProgress %+v, want reason %s and message\n%s", inProgress, ReasonDrainRefused, want)
	}
	if diff := cmp.Diff([]string{EventDrainRefused}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	n.Annotations[ForceAnnotation] = "true"
	n.Annotations[DeleteEmptyDirDataAnnotation] = "true"
	if _, err := f.kube.CoreV1().Nodes().Update(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refreshNode()
	f.sync()
	if diff := cmp.Diff(map[string][]string{"bare": {me}, "cache": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests once both annotations allow the pods (-want +got):\n%s", diff)
	}
	if !f.refreshNode().Spec.Unschedulable {
		t.Error("the allowed drain did not cordon the node")
	}
}

func TestMarkedNodeIsCordonedAndItsPodsRequested(t *testing.T) {
	f := newFixture(t)
	f.add(marked().Obj(), pod("web-0").Obj(), pod("web-1").Obj(), pod("fluentd").DaemonSet().Obj(), pod("job").Phase(corev1.PodSucceeded).Obj(),
		pod("elsewhere").Node("node-b").Obj())
	f.sync()

	n := f.refreshNode()
	if !n.Spec.Unschedulable || n.Annotations[drain.CordonedByAnnotation] != me {
		t.Errorf("node after the drain started: unschedulable %v, annotations %v", n.Spec.Unschedulable, n.Annotations)
	}
	if diff := cmp.Diff(map[string][]string{"web-0": {me}, "web-1": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	inProgress, drained := drain.FindNodeCondition(n, corev1.NodeDrainInProgress), drain.FindNodeCondition(n, corev1.NodeDrained)
	if inProgress == nil || inProgress.Status != corev1.ConditionTrue || drained == nil || drained.Status != corev1.ConditionFalse {
		t.Fatalf("conditions %+v", n.Status.Conditions)
	}
	want := "Draining because the evictionrequest.coordination.k8s.io/drain annotation asks for it: 2 pods left to evict (2 evicting); skipped: 1 DaemonSet-managed, 1 terminal."
	if inProgress.Message != want {
		t.Errorf("DrainInProgress message\n%q\nwant\n%q", inProgress.Message, want)
	}
	if drain.FindNodeCondition(n, corev1.NodeReady) == nil {
		t.Error("the drain's patch erased the kubelet's Ready condition")
	}
	if diff := cmp.Diff([]string{EventCordoned, EventDrainStarted}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// A sync with nothing new writes nothing and announces nothing.
	before := f.writes()
	f.sync()
	if after := f.writes(); after != before {
		t.Errorf("a sync without changes wrote %d times", after-before)
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("a sync without changes recorded %v", events)
	}

	// The pods leave, and the garbage collector deletes their requests:
	// the node is drained.
	for _, name := range []string{"web-0", "web-1"} {
		if err := f.pods.Delete(pod(name).Obj()); err != nil {
			t.Fatal(err)
		}
		f.deleteRequest(pod(name).Obj())
	}
	f.sync()
	n = f.refreshNode()
	if c := drain.FindNodeCondition(n, corev1.NodeDrained); c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonDrainCompleted {
		t.Errorf("Drained = %+v", c)
	}
	if c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("DrainInProgress = %+v", c)
	}
	if diff := cmp.Diff([]string{EventDrained}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestPodsThatLandLaterAreRequested(t *testing.T) {
	f := newFixture(t)
	f.add(marked().Obj(), pod("web-0").Obj())
	f.sync()
	f.add(pod("late-0").Obj())
	f.sync()
	if diff := cmp.Diff(map[string][]string{"web-0": {me}, "late-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A pod whose eviction a PodDisruptionBudget refuses is an event on the
// Node, once per change of what refuses it.
func TestARefusedEvictionIsAnEventOnTheNode(t *testing.T) {
	f := newFixture(t)
	db := pod("db-0").Label("app", "db").Obj()
	f.add(marked().Obj(), db)
	if err := f.pdbs.Add(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, Name: "db"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
	}); err != nil {
		t.Fatal(err)
	}
	f.sync()
	f.events()
	for _, refusals := range []int32{1, 2} {
		er := wrappers.MakeEvictionRequest(db, me).FailedEvictions(refusals).Obj()
		if err := f.ers.Update(er); err != nil {
			t.Fatal(err)
		}
		if _, err := f.controller.sync(f.ctx, nodeName); err != nil {
			t.Fatal(err)
		}
	}
	texts := f.eventTexts()
	if len(texts) != 1 || !strings.Contains(texts[0], EventEvictionBlocked) || !strings.Contains(texts[0], "Pod shop/db-0: the eviction was refused once: PodDisruptionBudget db allows no disruption") {
		t.Errorf("events %q, want one %s naming the budget", texts, EventEvictionBlocked)
	}
}
