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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// withDeadline is the marked node with the deadline annotations.
func withDeadline(deadline, onDeadline string) *corev1.Node {
	return marked().Annotation(drain.DeadlineAnnotation, deadline).Annotation(drain.OnDeadlineAnnotation, onDeadline).Obj()
}

// A Node's deadline annotations: the drain says the deadline on the Node
// and on the pod's request, and at the deadline deletes the pod left,
// recording it on the Node and on the request.
func TestTheDrainEscalatesAtTheNodesDeadline(t *testing.T) {
	f := newFixture(t)
	f.add(withDeadline("10m", "delete"), pod("db-0").Obj())
	f.sync()
	if c := drain.FindNodeCondition(f.refreshNode(), corev1.NodeDrainInProgress); c == nil || !strings.Contains(c.Message, "Deadline 2026-11-22T10:10:00Z, then delete.") {
		t.Errorf("DrainInProgress = %+v, want the deadline in its message", c)
	}
	f.sync()
	er, err := f.evr.CoordinationV1alpha1().EvictionRequests(pod("db-0").Obj().Namespace).Get(f.ctx, string(pod("db-0").Obj().UID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := er.Annotations[drain.DeadlineAnnotation]; got != "2026-11-22T10:10:00Z" {
		t.Errorf("the request's deadline annotation %q", got)
	}
	f.events()

	f.clock.Step(9 * time.Minute)
	f.sync()
	if _, err := f.kube.CoreV1().Pods(pod("db-0").Obj().Namespace).Get(f.ctx, "db-0", metav1.GetOptions{}); err != nil {
		t.Fatalf("the pod before the deadline: %v", err)
	}
	f.clock.Step(time.Minute)
	f.sync()
	if _, err := f.kube.CoreV1().Pods(pod("db-0").Obj().Namespace).Get(f.ctx, "db-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pod after the deadline: %v, want it deleted", err)
	}
	escalated := 0
	for _, e := range f.eventTexts() {
		if strings.Contains(e, EventDrainEscalated) && strings.Contains(e, "deadline passed: deleted, PodDisruptionBudgets ignored") {
			escalated++
		}
	}
	if escalated != 2 {
		t.Errorf("%d DrainEscalated events, want one on the Node and one on the request", escalated)
	}
}

// With fail, the passed deadline is reported on the Node (both conditions
// False, EvictionRequestNodeDrainFailed, a DrainFailed event) and the
// requests stay.
func TestTheDrainFailsAtTheNodesDeadline(t *testing.T) {
	f := newFixtureWith(t, Options{Deadline: time.Minute})
	f.add(marked().Obj(), pod("db-0").Obj())
	f.sync()
	f.events()
	f.clock.Step(time.Minute)
	f.sync()
	n := f.refreshNode()
	for _, ct := range []corev1.NodeConditionType{corev1.NodeDrainInProgress, corev1.NodeDrained} {
		if c := drain.FindNodeCondition(n, ct); c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonDrainFailed {
			t.Errorf("%s = %+v, want False with reason %s", ct, c, ReasonDrainFailed)
		}
	}
	if events := f.events(); len(events) != 1 || events[0] != EventDrainFailed {
		t.Errorf("events %v, want one %s", events, EventDrainFailed)
	}
	if got := f.requesters()["db-0"]; len(got) != 1 {
		t.Errorf("requesters of db-0 after the failed deadline: %v, want the drain's request kept", got)
	}

	// Later syncs keep the drain failed: its deadline does not start over.
	for range 3 {
		f.clock.Step(10 * time.Second)
		f.sync()
	}
	if c := drain.FindNodeCondition(f.refreshNode(), corev1.NodeDrainInProgress); c == nil || c.Reason != ReasonDrainFailed {
		t.Errorf("DrainInProgress after more syncs = %+v, want it still failed", c)
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("events after the failure: %v", events)
	}

	// A controller that restarts finds it failed too.
	f.controller.forget(nodeName)
	f.sync()
	if c := drain.FindNodeCondition(f.refreshNode(), corev1.NodeDrainInProgress); c == nil || c.Reason != ReasonDrainFailed {
		t.Errorf("DrainInProgress after a restart = %+v, want it still failed", c)
	}
}

// A deadline that does not parse is an event, once, and the drain goes on
// without it.
func TestAnInvalidDeadlineIsAnEvent(t *testing.T) {
	f := newFixture(t)
	f.add(withDeadline("soon", "fail"), pod("db-0").Obj())
	f.sync()
	f.sync()
	invalid := 0
	for _, e := range f.events() {
		if e == EventDrainDeadlineInvalid {
			invalid++
		}
	}
	if invalid != 1 {
		t.Errorf("%d %s events, want one", invalid, EventDrainDeadlineInvalid)
	}
	if got := f.requesters()["db-0"]; len(got) != 1 {
		t.Errorf("requesters of db-0: %v, want the drain", got)
	}
}
