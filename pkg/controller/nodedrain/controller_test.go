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
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	erinformers "github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

const (
	nodeName = "node-a"
	me       = "nodedrain.example.com"
)

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fixture is a controller whose caches the test fills by hand; the fake
// clientsets record its writes.
type fixture struct {
	t          *testing.T
	ctx        context.Context
	kube       *k8sfake.Clientset
	evr        *erfake.Clientset
	controller *Controller
	recorder   *record.FakeRecorder
	nodes      cache.Indexer
	pods       cache.Indexer
	ers        cache.Indexer
	pdbs       cache.Indexer
	clock      *testingclock.FakeClock
}

func newFixture(t *testing.T) *fixture {
	return newFixtureWith(t, Options{})
}

func newFixtureWith(t *testing.T, opts Options) *fixture {
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, ctx: ctx, kube: k8sfake.NewClientset(), evr: erfake.NewClientset(), clock: testingclock.NewFakeClock(start)}
	kubeInformers := informers.NewSharedInformerFactory(f.kube, 0)
	podInformer := kubeInformers.Core().V1().Pods()
	erInformers := erinformers.NewSharedInformerFactory(f.evr, 0)
	erInformer := erInformers.Coordination().V1alpha1().EvictionRequests()
	p, err := participant.New(evictionapi.Coordination, me, f.kube, f.evr, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewController(ctx, f.kube, f.kube, p, participant.Informers{Kube: kubeInformers, EvictionRequests: erInformers}, f.clock, time.Minute, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(100)
	c.recorder = f.recorder
	f.controller = c
	f.nodes = kubeInformers.Core().V1().Nodes().Informer().GetIndexer()
	f.pods = podInformer.Informer().GetIndexer()
	f.ers = erInformer.Informer().GetIndexer()
	f.pdbs = kubeInformers.Policy().V1().PodDisruptionBudgets().Informer().GetIndexer()
	return f
}

// add stores objects in the API and in the caches.
func (f *fixture) add(objs ...runtime.Object) {
	f.t.Helper()
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *corev1.Node:
			if err = f.kube.Tracker().Add(o); err == nil {
				err = f.nodes.Add(o)
			}
		case *corev1.Pod:
			if err = f.kube.Tracker().Add(o); err == nil {
				err = f.pods.Add(o)
			}
		case *v1alpha1.EvictionRequest:
			if err = f.evr.Tracker().Add(o); err == nil {
				err = f.ers.Add(o)
			}
		}
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// refreshNode copies the stored node into the cache, as the informer would.
func (f *fixture) refreshNode() *corev1.Node {
	f.t.Helper()
	node, err := f.kube.CoreV1().Nodes().Get(f.ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.nodes.Update(node); err != nil {
		f.t.Fatal(err)
	}
	return node
}

func (f *fixture) sync() time.Duration {
	f.t.Helper()
	requeue, err := f.controller.sync(f.ctx, nodeName)
	if err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	f.refreshNode()
	f.refreshRequests()
	return requeue
}

// writes counts the writes the clientsets received.
func (f *fixture) writes() int {
	n := 0
	for _, a := range append(f.kube.Actions(), f.evr.Actions()...) {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			n++
		}
	}
	return n
}

func (f *fixture) events() []string {
	var reasons []string
	for _, e := range f.eventTexts() {
		reasons = append(reasons, strings.Fields(e)[1])
	}
	return reasons
}

// eventTexts are the events recorded since the last call, whole.
func (f *fixture) eventTexts() []string {
	var texts []string
	for {
		select {
		case e := <-f.recorder.Events:
			texts = append(texts, e)
		default:
			return texts
		}
	}
}

// requesters lists, by pod name, the requesters of the stored requests.
func (f *fixture) requesters() map[string][]string {
	f.t.Helper()
	list, err := f.evr.CoordinationV1alpha1().EvictionRequests("").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	got := map[string][]string{}
	for _, er := range list.Items {
		names := []string{}
		for _, r := range er.Spec.Requesters {
			names = append(names, r.Name)
		}
		sort.Strings(names)
		got[er.Spec.Target.PodRef.Name] = names
	}
	return got
}

// node is the drained node; pod a pod on it.
func node() *wrappers.NodeWrapper {
	return wrappers.MakeNode(nodeName)
}

// marked is the node marked for drain, allowing the bare pods the tests
// build (TestBarePodsAndEmptyDirPodsRefuseTheDrain covers the refusal).
func marked() *wrappers.NodeWrapper {
	return node().Annotation(DrainAnnotation, "true").Annotation(ForceAnnotation, "true")
}

func shuttingDown() *wrappers.NodeWrapper {
	return node().Condition(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", "node is shutting down")
}

func pod(name string) *wrappers.PodWrapper {
	return wrappers.MakePod(name).Node(nodeName)
}

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

// deleteRequest deletes the request of pod, as the garbage collector does
// with the pod.
func (f *fixture) deleteRequest(pod *corev1.Pod) {
	f.t.Helper()
	if err := f.evr.CoordinationV1alpha1().EvictionRequests(pod.Namespace).Delete(f.ctx, string(pod.UID), metav1.DeleteOptions{}); err != nil {
		f.t.Fatal(err)
	}
	if err := f.ers.Delete(wrappers.MakeEvictionRequest(pod).Obj()); err != nil {
		f.t.Fatal(err)
	}
}

// refreshRequests copies the stored requests into the cache.
func (f *fixture) refreshRequests() {
	f.t.Helper()
	list, err := f.evr.CoordinationV1alpha1().EvictionRequests("").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range list.Items {
		if err := f.ers.Update(&list.Items[i]); err != nil {
			f.t.Fatal(err)
		}
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

func TestAShuttingDownNodeGetsRequestsWithoutACordon(t *testing.T) {
	f := newFixture(t)
	f.add(shuttingDown().Obj(), pod("web-0").Obj())
	f.sync()
	n := f.refreshNode()
	if n.Spec.Unschedulable {
		t.Error("the drain cordoned a node that shuts down")
	}
	if diff := cmp.Diff(map[string][]string{"web-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress); c == nil || !strings.Contains(c.Message, "the node is shutting down") {
		t.Errorf("DrainInProgress = %+v", c)
	}

	if c := drain.FindNodeCondition(n, corev1.NodeDrainInProgress); c.Reason != ReasonShutdownDrainStarted {
		t.Errorf("DrainInProgress reason %q, want %q", c.Reason, ReasonShutdownDrainStarted)
	}

	// The kubelet is gone: the node lifecycle controller turns Ready to
	// Unknown. The drain goes on.
	*drain.FindNodeCondition(n, corev1.NodeReady) = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}
	if _, err := f.kube.CoreV1().Nodes().UpdateStatus(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refreshNode()
	f.sync()
	if diff := cmp.Diff(map[string][]string{"web-0": {me}}, f.requesters()); diff != "" {
		t.Errorf("requests once the node stopped posting its status (-want +got):\n%s", diff)
	}
	n = f.refreshNode()

	// The shutdown is canceled: the node is Ready again.
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}, *drain.FindNodeCondition(n, corev1.NodeDrainInProgress)}
	if _, err := f.kube.CoreV1().Nodes().UpdateStatus(f.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refreshNode()
	f.refreshRequests()
	f.sync()
	if diff := cmp.Diff(map[string][]string{"web-0": {}}, f.requesters()); diff != "" {
		t.Errorf("requests after the node was Ready again (-want +got):\n%s", diff)
	}
}

func TestAnUnreachableNodeIsNoShutdown(t *testing.T) {
	f := newFixture(t)
	f.add(node().Condition(corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.").Obj(), pod("web-0").Obj())
	f.sync()
	if got := f.requesters(); len(got) != 0 {
		t.Errorf("requests for a node that merely stopped posting its status: %v", got)
	}
}

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
