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

package drain

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// fakeRequests is a participant.Participant over a map: what the cache shows of each pod's
// request, and what a request or withdrawal writes.
type fakeRequests struct {
	mu sync.Mutex
	// cache is what Status reads; written is what Request wrote, which the
	// cache shows only when the test says so (showWritten).
	cache, written map[types.UID]participant.Status
	// fail makes the requests of these pods fail.
	fail      map[types.UID]error
	requested []string
	withdrawn []string
	forbidden map[types.UID]bool
	// annotated are the annotations written on each pod's request.
	annotated map[types.UID][]map[string]*string
}

func newFakeRequests() *fakeRequests {
	return &fakeRequests{cache: map[types.UID]participant.Status{}, written: map[types.UID]participant.Status{}, fail: map[types.UID]error{},
		forbidden: map[types.UID]bool{}, annotated: map[types.UID][]map[string]*string{}}
}

func (f *fakeRequests) API() evictionapi.API { return evictionapi.Coordination }

func (f *fakeRequests) Name() string { return "drain.example.com" }

func (f *fakeRequests) Status(_ context.Context, _ string, uid types.UID) (participant.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cache[uid], nil
}

func (f *fakeRequests) Wait(context.Context, *corev1.Pod) (requester.Result, error) {
	return requester.Result{}, errors.New("a drain does not wait")
}

func (f *fakeRequests) Annotate(_ context.Context, _ string, uid types.UID, annotations map[string]*string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.annotated[uid] = append(f.annotated[uid], annotations)
	// As a merge patch: nil removes.
	status := f.written[uid]
	merged := map[string]string{}
	for k, v := range status.Annotations {
		merged[k] = v
	}
	for k, v := range annotations {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = *v
		}
	}
	status.Annotations = merged
	f.written[uid] = status
	return nil
}

func (f *fakeRequests) Inform(participant.Informers) ([]cache.SharedIndexInformer, error) {
	return nil, nil
}

func (f *fakeRequests) Request(_ context.Context, pod *corev1.Pod, _ map[string]string) (participant.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requested = append(f.requested, pod.Name)
	if err := f.fail[pod.UID]; err != nil {
		return participant.Status{}, err
	}
	f.written[pod.UID] = participant.Status{Exists: true, Requested: true}
	return f.written[pod.UID], nil
}

func (f *fakeRequests) Withdraw(_ context.Context, namespace string, uid types.UID) (participant.Withdrawal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.withdrawn = append(f.withdrawn, string(uid))
	if f.forbidden[uid] {
		return participant.WithdrawalForbidden, errors.New("forbidden by the interceptor")
	}
	return participant.Withdrawn, nil
}

// showWritten makes the cache catch up with what was written.
func (f *fakeRequests) showWritten() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for uid, s := range f.written {
		f.cache[uid] = s
	}
}

func (f *fakeRequests) takeRequested() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requested
	f.requested = nil
	sort.Strings(r)
	return r
}

// fakePods is a PodSource over a map of nodes.
type fakePods struct {
	mu   sync.Mutex
	pods map[string][]*corev1.Pod
}

func (f *fakePods) OnNode(node string) []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods[node]
}

func (f *fakePods) set(node string, pods ...*corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods[node] = pods
}

// sessionFixture is a drain of node-a on fakes, with a fake clock.
type sessionFixture struct {
	requests *fakeRequests
	pods     *fakePods
	clock    *testingclock.FakeClock
	helper   *Helper
	session  *Session
	late     []string
	blocked  []string
}

func newSessionFixture(pods ...*corev1.Pod) *sessionFixture {
	f := &sessionFixture{
		requests: newFakeRequests(),
		pods:     &fakePods{pods: map[string][]*corev1.Pod{"node-a": pods}},
		clock:    testingclock.NewFakeClock(heartbeat),
	}
	f.helper = &Helper{
		Participant: f.requests, Pods: f.pods, Clock: f.clock, RetryAfter: 5 * time.Second,
		// The fixture's pods declare no controller.
		Policy: Policy{Force: true},
		OnRequested: func(pod *corev1.Pod, late bool, err error) {
			if late {
				f.late = append(f.late, pod.Name)
			}
		},
		OnBlocked: func(p PodProgress) { f.blocked = append(f.blocked, p.Name) },
	}
	f.session = f.helper.NewSession("node-a")
	return f
}

func (f *sessionFixture) sync(t *testing.T) Report {
	t.Helper()
	report, err := f.session.Sync(context.Background())
	if err != nil {
		t.Logf("Sync: %v", err)
	}
	return report
}

func TestSyncRequestsEveryEvictablePodOnce(t *testing.T) {
	web0, web1 := wrappers.MakePod("web-0").Node("node-a").Obj(), wrappers.MakePod("web-1").Node("node-a").Obj()
	f := newSessionFixture(web0, web1, wrappers.MakePod("fluentd").DaemonSet().Obj())

	report := f.sync(t)
	if diff := cmp.Diff([]string{"web-0", "web-1"}, f.requests.takeRequested()); diff != "" {
		t.Errorf("requested (-want +got):\n%s", diff)
	}
	if report.Requested != 2 || report.Summary.Total != 2 || len(report.Selections["node-a"].Skipped[SkipDaemonSet]) != 1 {
		t.Errorf("report: %d requested, %d pods, skipped %v", report.Requested, report.Summary.Total, report.Selections["node-a"].Skipped)
	}
	// The cache does not show the requests yet: they are not written
	// again before RetryAfter.
	f.clock.Step(time.Second)
	if report := f.sync(t); len(f.requests.takeRequested()) != 0 || report.RetryIn != 4*time.Second {
		t.Errorf("a second Sync a second later requested again, or retries in %s, not 4s", report.RetryIn)
	}
	f.requests.showWritten()
	f.clock.Step(10 * time.Second)
	if report := f.sync(t); len(f.requests.takeRequested()) != 0 || report.RetryIn != 0 {
		t.Errorf("requests the cache shows were asked for again (retry in %s)", report.RetryIn)
	}
	if len(f.late) != 0 {
		t.Errorf("pods of the first Sync reported as late: %v", f.late)
	}
}

func TestSyncRetriesAFailedRequestAfterRetryAfter(t *testing.T) {
	web0 := wrappers.MakePod("web-0").Node("node-a").Obj()
	f := newSessionFixture(web0)
	f.requests.fail[web0.UID] = errors.New("the server is busy")

	if _, err := f.session.Sync(context.Background()); err == nil {
		t.Fatal("Sync did not report the failed request")
	}
	f.requests.takeRequested()
	delete(f.requests.fail, web0.UID)
	f.clock.Step(4 * time.Second)
	if f.sync(t); len(f.requests.takeRequested()) != 0 {
		t.Error("a failed request was asked for again before RetryAfter")
	}
	f.clock.Step(time.Second)
	if f.sync(t); !cmp.Equal([]string{"web-0"}, f.requests.takeRequested()) {
		t.Error("a failed request was not asked for again after RetryAfter")
	}
}

func TestSyncAdoptsLatePodsAndAsksAgainAfterACancel(t *testing.T) {
	web0 := wrappers.MakePod("web-0").Node("node-a").Obj()
	f := newSessionFixture(web0)
	f.sync(t)
	f.requests.takeRequested()
	f.requests.showWritten()
	f.clock.Step(time.Minute)

	web1 := wrappers.MakePod("web-1").Node("node-a").Obj()
	f.pods.set("node-a", web0, web1)
	f.requests.cache[web0.UID] = participant.Status{Exists: true, Complete: true, Canceled: true}
	f.sync(t)
	if diff := cmp.Diff([]string{"web-0", "web-1"}, f.requests.takeRequested()); diff != "" {
		t.Errorf("requested (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"web-1"}, f.late); diff != "" {
		t.Errorf("late pods (-want +got):\n%s", diff)
	}
}

// A pod the drain asked for whose request went with it (the garbage
// collector removes the request of a pod that is gone) while the cache
// still shows it, as a cache does for a moment after kube-apiserver
// restarted, is not asked for again; a pod still there is. So with a pod
// whose request the session found made (by another leader's session).
func TestSyncAsksAgainOnlyForAPodStillThere(t *testing.T) {
	web0, web1 := wrappers.MakePod("web-0").Node("node-a").Obj(), wrappers.MakePod("web-1").Node("node-a").Obj()
	f := newSessionFixture(web0, web1)
	f.helper.LivePods = k8sfake.NewClientset(web1).CoreV1() // web-0 is gone from kube-apiserver
	f.sync(t)
	f.requests.takeRequested()
	f.requests.showWritten()
	f.clock.Step(time.Minute)

	delete(f.requests.cache, web0.UID)
	delete(f.requests.cache, web1.UID)
	f.sync(t)
	if diff := cmp.Diff([]string{"web-1"}, f.requests.takeRequested()); diff != "" {
		t.Errorf("asked for again (-want +got):\n%s", diff)
	}
}

func TestSyncOfASessionThatTookOverAsksAgainOnlyForAPodStillThere(t *testing.T) {
	web0, web1 := wrappers.MakePod("web-0").Node("node-a").Obj(), wrappers.MakePod("web-1").Node("node-a").Obj()
	f := newSessionFixture(web0, web1)
	f.helper.LivePods = k8sfake.NewClientset(web1).CoreV1()
	f.requests.cache[web0.UID] = participant.Status{Exists: true, Requested: true}
	f.requests.cache[web1.UID] = participant.Status{Exists: true, Requested: true}
	f.sync(t)
	if got := f.requests.takeRequested(); len(got) != 0 {
		t.Fatalf("asked again for pods whose requests exist: %v", got)
	}

	delete(f.requests.cache, web0.UID)
	delete(f.requests.cache, web1.UID)
	f.sync(t)
	if diff := cmp.Diff([]string{"web-1"}, f.requests.takeRequested()); diff != "" {
		t.Errorf("asked for again (-want +got):\n%s", diff)
	}
}

func TestSyncReportsGonePodsAndDrainsWhenTheirRequestsComplete(t *testing.T) {
	web0 := wrappers.MakePod("web-0").Node("node-a").Obj()
	f := newSessionFixture(web0)
	f.sync(t)
	f.requests.showWritten()
	f.pods.set("node-a")

	report := f.sync(t)
	if report.Drained() || report.Progress[0].State != StateGone {
		t.Fatalf("a pod gone with its request not complete: drained %v, state %s", report.Drained(), report.Progress[0].State)
	}
	f.requests.cache[web0.UID] = participant.Status{Exists: true, Requested: true, Complete: true}
	if report := f.sync(t); !report.Drained() || report.Summary.String() != "1/1 pod gone" {
		t.Errorf("drained %v: %s", report.Drained(), report.Summary)
	}
}

// --skip-wait-for-delete-timeout: a pod terminating for longer no longer
// holds the drain.
func TestSyncStopsWaitingForAPodDeletedLongAgo(t *testing.T) {
	web0 := wrappers.MakePod("web-0").Node("node-a").Obj()
	f := newSessionFixture(web0)
	f.helper.SkipWaitForDeleteTimeout = time.Minute
	f.sync(t)
	f.requests.showWritten()
	f.pods.set("node-a", wrappers.MakePod("web-0").Node("node-a").Terminating(f.clock.Now()).Obj())
	if report := f.sync(t); report.Drained() {
		t.Fatal("drained while the pod has been terminating for less than the timeout")
	}
	f.clock.Step(time.Minute + time.Second)
	if report := f.sync(t); !report.Drained() {
		t.Errorf("not drained once the pod has been terminating for longer than the timeout: %s", report.Summary)
	}
}

func TestSyncCallsOnBlockedOncePerChange(t *testing.T) {
	db := wrappers.MakePod("db-0").Node("node-a").Label("app", "db").Obj()
	f := newSessionFixture(db)
	f.sync(t)
	f.requests.cache[db.UID] = participant.Status{Exists: true, Requested: true, FailedEvictions: 1}
	f.sync(t)
	f.requests.cache[db.UID] = participant.Status{Exists: true, Requested: true, FailedEvictions: 2}
	f.sync(t)
	if diff := cmp.Diff([]string{"db-0"}, f.blocked); diff != "" {
		t.Errorf("OnBlocked calls (-want +got):\n%s", diff)
	}
	f.requests.cache[db.UID] = participant.Status{Exists: true, Requested: true, ActiveInterceptor: "a.example.com"}
	f.sync(t)
	f.requests.cache[db.UID] = participant.Status{Exists: true, Requested: true, FailedEvictions: 3}
	f.sync(t)
	if diff := cmp.Diff([]string{"db-0", "db-0"}, f.blocked); diff != "" {
		t.Errorf("a pod blocked again after an interceptor: OnBlocked calls (-want +got):\n%s", diff)
	}
}

func TestWithdrawLeavesWhatTheDrainDoesNotHold(t *testing.T) {
	pods := map[string]*corev1.Pod{}
	for _, name := range []string{"listed", "complete", "others", "unseen", "untracked-listed"} {
		pods[name] = wrappers.MakePod(name).Node("node-a").Obj()
	}
	f := newSessionFixture(pods["listed"], pods["complete"], pods["others"], pods["unseen"])
	f.sync(t)
	f.pods.set("node-a", pods["listed"], pods["complete"], pods["others"], pods["unseen"], pods["untracked-listed"])
	f.requests.cache = map[types.UID]participant.Status{
		pods["listed"].UID:           {Exists: true, Requested: true},
		pods["complete"].UID:         {Exists: true, Requested: true, Complete: true},
		pods["others"].UID:           {Exists: true},
		pods["untracked-listed"].UID: {Exists: true, Requested: true},
	}
	f.requests.forbidden[pods["untracked-listed"].UID] = true

	report := f.session.Withdraw(context.Background())
	sort.Strings(f.requests.withdrawn)
	want := []string{"uid-listed", "uid-unseen", "uid-untracked-listed"}
	if diff := cmp.Diff(want, f.requests.withdrawn); diff != "" {
		t.Errorf("withdrawn from (-want +got):\n%s", diff)
	}
	if report.Withdrawn != 2 || report.Forbidden != 1 || len(report.Errors) != 0 {
		t.Errorf("report: %+v", report)
	}
}
