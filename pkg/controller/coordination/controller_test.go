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

package coordination

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	erinformers "github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
)

const (
	ns     = "shop"
	podUID = "0a0b0c0d-1111-4222-8333-444455556666"
	key    = ns + "/" + podUID
)

var start = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// fixture is a controller whose informer caches the test fills by hand, so
// that every sync sees exactly the state the test set up; the fake
// clientsets record what the controller writes.
type fixture struct {
	t          testing.TB
	ctx        context.Context
	clock      *testingclock.FakeClock
	kube       *k8sfake.Clientset
	erClient   *erfake.Clientset
	controller *Controller
	recorder   *record.FakeRecorder
	erIndexer  cache.Indexer
	podIndexer cache.Indexer

	mu sync.Mutex
	// evictions are the pods the controller asked the Eviction API to evict,
	// with the UID of their precondition.
	evictions []string
	// evictionError, when set, is what the Eviction API answers.
	evictionError error
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	metrics.Register()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, ctx: ctx, clock: testingclock.NewFakeClock(start), kube: k8sfake.NewClientset(), erClient: erfake.NewClientset()}
	f.kube.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		eviction := action.(clienttesting.CreateAction).GetObject().(*policyv1.Eviction)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.evictions = append(f.evictions, eviction.Name+"@"+string(ptr.Deref(eviction.DeleteOptions.Preconditions.UID, "")))
		return true, nil, f.evictionError
	})

	erInformer := erinformers.NewSharedInformerFactory(f.erClient, 0).Coordination().V1alpha1().EvictionRequests()
	podInformer := informers.NewSharedInformerFactory(f.kube, 0).Core().V1().Pods()
	c, err := NewController(ctx, f.kube, f.erClient.CoordinationV1alpha1(), erInformer, podInformer, f.clock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(100)
	c.recorder = f.recorder
	f.controller, f.erIndexer, f.podIndexer = c, erInformer.Informer().GetIndexer(), podInformer.Informer().GetIndexer()
	return f
}

// addPod stores pod in kube-apiserver and in the cache.
func (f *fixture) addPod(pod *corev1.Pod) {
	f.t.Helper()
	if err := f.kube.Tracker().Add(pod); err != nil {
		f.t.Fatal(err)
	}
	if err := f.podIndexer.Add(pod); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) addEvictionRequest(er *v1alpha1.EvictionRequest) {
	f.t.Helper()
	if err := f.erClient.Tracker().Add(er); err != nil {
		f.t.Fatal(err)
	}
	f.refresh()
}

// refresh copies the stored EvictionRequest into the cache, as the informer
// would after the controller's write.
func (f *fixture) refresh() {
	f.t.Helper()
	er, err := f.erClient.CoordinationV1alpha1().EvictionRequests(ns).Get(f.ctx, podUID, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.erIndexer.Update(er); err != nil {
		f.t.Fatal(err)
	}
}

// sync runs one sync of the request and refreshes the cache with its writes.
func (f *fixture) sync() time.Duration {
	f.t.Helper()
	requeue, err := f.controller.sync(f.ctx, key)
	if err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	f.refresh()
	return requeue
}

func (f *fixture) get() *v1alpha1.EvictionRequest {
	f.t.Helper()
	er, err := f.erClient.CoordinationV1alpha1().EvictionRequests(ns).Get(f.ctx, podUID, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return er
}

// setStatus changes the stored status as an interceptor would.
func (f *fixture) setStatus(mutate func(*v1alpha1.EvictionRequestStatus)) {
	f.t.Helper()
	er := f.get()
	mutate(&er.Status)
	if _, err := f.erClient.CoordinationV1alpha1().EvictionRequests(ns).UpdateStatus(f.ctx, er, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.refresh()
}

func (f *fixture) evicted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.evictions...)
}

func (f *fixture) failEvictions(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evictionError = err
}

// events drains the recorded events as "<type> <reason>".
func (f *fixture) events() []string {
	var events []string
	for {
		select {
		case e := <-f.recorder.Events:
			fields := strings.SplitN(e, " ", 3)
			events = append(events, fields[0]+" "+fields[1])
		default:
			return events
		}
	}
}

func (f *fixture) expectEvents(want ...string) {
	f.t.Helper()
	if diff := cmp.Diff(want, f.events()); diff != "" {
		f.t.Errorf("events (-want +got):\n%s", diff)
	}
}

// newPod is the pod web-0 of the requests of these tests, changed by mutate.
func newPod(mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := wrappers.MakePod("web-0").Namespace(ns).UID(podUID).Obj()
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

// newEvictionRequest is the request of web-0, created at start with a
// heartbeat deadline of 600 s, listing interceptors.
func newEvictionRequest(interceptors ...string) *v1alpha1.EvictionRequest {
	return wrappers.MakeEvictionRequest(newPod(), "nodemaintenance.k8s.io").Created(start).HeartbeatDeadlineSeconds(600).Interceptors(interceptors...).Obj()
}

func activeName(er *v1alpha1.EvictionRequest) string {
	return ptr.Deref(er.Status.ActiveInterceptorName, "")
}

func tooManyRequests(retryAfterSeconds int) error {
	return apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", retryAfterSeconds)
}

func TestNoInterceptorEvictsThePod(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	before, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultSuccess))

	if requeue := f.sync(); requeue != time.Minute {
		t.Errorf("requeue after a successful eviction = %s, want the 1m expectation timeout", requeue)
	}
	if diff := cmp.Diff([]string{"web-0@" + podUID}, f.evicted()); diff != "" {
		t.Errorf("evictions with their UID precondition (-want +got):\n%s", diff)
	}
	if got := f.get().Status.Message; !strings.Contains(got, "evicted through the Eviction API") {
		t.Errorf("status.message = %q", got)
	}
	f.expectEvents("Normal " + EventEvicted)
	after, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultSuccess))
	if after != before+1 {
		t.Errorf("evictions{result=success} went from %v to %v, want +1", before, after)
	}

	// The status write wakes the controller before the pod cache shows the
	// pod terminating: it must not evict the pod again.
	f.clock.Step(time.Second)
	if requeue := f.sync(); requeue != 59*time.Second || len(f.evicted()) != 1 {
		t.Errorf("sync after the eviction: requeue %s and %d evictions, want 59s and still 1", requeue, len(f.evicted()))
	}
	// The pod terminates: nothing more to do until it is gone.
	terminating := newPod(func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(f.clock.Now())) })
	if err := f.podIndexer.Update(terminating); err != nil {
		t.Fatal(err)
	}
	if requeue := f.sync(); requeue != 0 || len(f.evicted()) != 1 {
		t.Errorf("sync of a terminating pod: requeue %s and %d evictions, want none and still 1", requeue, len(f.evicted()))
	}
}

func TestInterceptorSelectionAndHandOff(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest("a.example.com", "b.example.com", "c.example.com"))

	// The highest index goes first; without a heartbeat its deadline counts
	// from the creation of the request.
	f.clock.Step(time.Minute)
	if requeue := f.sync(); requeue != 9*time.Minute {
		t.Errorf("requeue after selection = %s, want the 9m left of the deadline counted from creation", requeue)
	}
	er := f.get()
	if activeName(er) != "c.example.com" || er.Status.HeartbeatTime != nil || er.Status.ActiveInterceptorCompleted {
		t.Errorf("after selection: active %q, heartbeat %v, completed %v; want c.example.com, none, false",
			activeName(er), er.Status.HeartbeatTime, er.Status.ActiveInterceptorCompleted)
	}
	f.expectEvents("Normal " + EventInterceptorSelected)

	// c answers and works: the controller waits for its deadline, no polling.
	f.clock.Step(2 * time.Minute)
	f.setStatus(func(s *v1alpha1.EvictionRequestStatus) {
		s.HeartbeatTime = ptr.To(metav1.NewTime(f.clock.Now()))
		s.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(f.clock.Now().Add(time.Hour)))
	})
	if requeue := f.sync(); requeue != 10*time.Minute {
		t.Errorf("requeue while c heartbeats = %s, want its full deadline of 10m", requeue)
	}
	if activeName(f.get()) != "c.example.com" {
		t.Fatalf("c was replaced while it heartbeats")
	}

	// c completes: b takes over at once, with the fields reset.
	f.clock.Step(time.Minute)
	f.setStatus(func(s *v1alpha1.EvictionRequestStatus) { s.ActiveInterceptorCompleted = true })
	if requeue := f.sync(); requeue != 10*time.Minute {
		t.Errorf("requeue after the hand-off = %s, want b's deadline of 10m", requeue)
	}
	er = f.get()
	if activeName(er) != "b.example.com" || er.Status.ActiveInterceptorCompleted || er.Status.ExpectedInterceptorFinishTime != nil ||
		!er.Status.HeartbeatTime.Time.Equal(f.clock.Now()) {
		t.Errorf("after c completed: %+v; want b active, completed false, heartbeat now, no expected finish time", er.Status)
	}
	if !strings.Contains(er.Status.Message, "b.example.com replaced c.example.com, which completed") {
		t.Errorf("hand-off message = %q", er.Status.Message)
	}
	f.expectEvents("Normal " + EventInterceptorHandedOff)
	if len(f.evicted()) != 0 {
		t.Errorf("the pod was evicted while interceptors were left: %v", f.evicted())
	}
}

func TestHeartbeatDeadlines(t *testing.T) {
	cases := map[string]struct {
		heartbeat *time.Time
		// elapsed since the creation of the request when the controller syncs.
		elapsed     time.Duration
		wantActive  string
		wantRequeue time.Duration
	}{
		"deadline from creation not passed": {elapsed: 9 * time.Minute, wantActive: "b.example.com", wantRequeue: time.Minute},
		"deadline from creation passed":     {elapsed: 10 * time.Minute, wantActive: "a.example.com", wantRequeue: 10 * time.Minute},
		"deadline from heartbeat not passed": {
			heartbeat: ptr.To(start.Add(5 * time.Minute)), elapsed: 14*time.Minute + 59*time.Second,
			wantActive: "b.example.com", wantRequeue: time.Second,
		},
		"deadline from heartbeat passed": {
			heartbeat: ptr.To(start.Add(5 * time.Minute)), elapsed: 15 * time.Minute,
			wantActive: "a.example.com", wantRequeue: 10 * time.Minute,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.addPod(newPod())
			er := newEvictionRequest("a.example.com", "b.example.com")
			er.Status.ActiveInterceptorName = ptr.To("b.example.com")
			if tc.heartbeat != nil {
				er.Status.HeartbeatTime = ptr.To(metav1.NewTime(*tc.heartbeat))
			}
			f.addEvictionRequest(er)
			f.clock.SetTime(start.Add(tc.elapsed))

			if requeue := f.sync(); requeue != tc.wantRequeue {
				t.Errorf("requeue = %s, want %s", requeue, tc.wantRequeue)
			}
			got := f.get()
			if activeName(got) != tc.wantActive {
				t.Errorf("active interceptor = %q, want %q", activeName(got), tc.wantActive)
			}
			if tc.wantActive == "a.example.com" {
				if !strings.Contains(got.Status.Message, "missed its heartbeat deadline") {
					t.Errorf("message of a time-out = %q", got.Status.Message)
				}
				f.expectEvents("Warning " + EventInterceptorTimedOut)
			}
		})
	}
}

func TestLastInterceptorDoneEvicts(t *testing.T) {
	cases := map[string]func(*v1alpha1.EvictionRequestStatus){
		"completed": func(s *v1alpha1.EvictionRequestStatus) { s.ActiveInterceptorCompleted = true },
		"timed out": func(s *v1alpha1.EvictionRequestStatus) {
			s.HeartbeatTime = ptr.To(metav1.NewTime(start.Add(-11 * time.Minute)))
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.addPod(newPod())
			er := newEvictionRequest("a.example.com", "b.example.com")
			er.Status.ActiveInterceptorName = ptr.To("a.example.com")
			mutate(&er.Status)
			f.addEvictionRequest(er)

			f.sync()
			if len(f.evicted()) != 1 {
				t.Errorf("evictions = %v, want one once the last interceptor is done", f.evicted())
			}
			if activeName(f.get()) != "a.example.com" {
				t.Errorf("the active interceptor changed to %q; it stays until completion", activeName(f.get()))
			}
		})
	}
}

// A refusal that names its PodDisruptionBudget names it on the request, as
// the lifecycle.k8s.io evictor does: both take the message from the
// eviction core.
func TestARefusalNamesTheBudget(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.failEvictions(wrappers.RefusedByBudget("web-pdb"))
	f.sync()
	if msg := f.get().Status.Message; !strings.Contains(msg, "(attempts=1): PodDisruptionBudget web-pdb refuses it") {
		t.Errorf("status.message = %q, want the refusing budget named", msg)
	}
}

func TestFailedEvictionsBackOff(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.failEvictions(tooManyRequests(0))
	blockedBefore, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultBlocked))

	var delays []time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		delay := f.sync()
		delays = append(delays, delay)
		if got := f.get().Status.PodEvictionStatus.FailedAPIEvictionCounter; got != int32(attempt) {
			t.Fatalf("failedAPIEvictionCounter = %d after %d failed evictions", got, attempt)
		}
		// The status write wakes the controller before the backoff ends: it
		// must not evict again.
		if early := f.sync(); early != delay || len(f.evicted()) != attempt {
			t.Fatalf("sync during the backoff: requeue %s and %d evictions; want %s and %d", early, len(f.evicted()), delay, attempt)
		}
		f.clock.Step(delay)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, delays); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	if msg := f.get().Status.Message; !strings.Contains(msg, "(attempts=4)") || !strings.Contains(msg, "disruption budget") {
		t.Errorf("status.message = %q, want the attempt count and the API's reason", msg)
	}
	blockedAfter, _ := testutil.GetCounterMetricValue(metrics.Evictions.WithLabelValues(eviction.ResultBlocked))
	if blockedAfter != blockedBefore+4 {
		t.Errorf("evictions{result=blocked} went from %v to %v, want +4", blockedBefore, blockedAfter)
	}
	f.expectEvents("Warning "+EventEvictionFailed, "Warning "+EventEvictionFailed, "Warning "+EventEvictionFailed, "Warning "+EventEvictionFailed)

	// The PDB allows the disruption now.
	f.failEvictions(nil)
	f.sync()
	if len(f.evicted()) != 5 {
		t.Errorf("evictions = %d, want the fifth to succeed", len(f.evicted()))
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.failEvictions(tooManyRequests(10))
	if delay := f.sync(); delay != 10*time.Second {
		t.Errorf("delay after a 429 with Retry-After: 10 = %s, want 10s", delay)
	}
	f.failEvictions(apierrors.NewInternalError(context.DeadlineExceeded))
	f.clock.Step(10 * time.Second)
	if delay := f.sync(); delay != 2*time.Second {
		t.Errorf("delay after a 500 = %s, want the exponential 2s", delay)
	}
	if got := f.get().Status.PodEvictionStatus.FailedAPIEvictionCounter; got != 2 {
		t.Errorf("failedAPIEvictionCounter = %d, want 2: a 5xx counts too", got)
	}
}

func TestHeartbeatCancelsPendingEviction(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	er := newEvictionRequest("a.example.com")
	er.Status.ActiveInterceptorName = ptr.To("a.example.com")
	f.addEvictionRequest(er)
	f.failEvictions(tooManyRequests(0))

	f.clock.Step(10 * time.Minute)
	var pending time.Duration
	for i := 0; i < 3; i++ {
		f.clock.Step(pending)
		pending = f.sync()
	}
	if len(f.evicted()) != 3 || pending != 4*time.Second {
		t.Fatalf("evictions = %d with %s to the next one, want 3 and 4s while a is silent", len(f.evicted()), pending)
	}

	// a comes back with a heartbeat during the backoff: the pending eviction
	// is off.
	f.clock.Step(time.Second)
	f.setStatus(func(s *v1alpha1.EvictionRequestStatus) { s.HeartbeatTime = ptr.To(metav1.NewTime(f.clock.Now())) })
	if requeue := f.sync(); requeue != 10*time.Minute {
		t.Errorf("requeue after a fresh heartbeat = %s, want a's deadline", requeue)
	}
	if wait := f.controller.backoff.Wait(key, f.clock.Now()); wait != 0 {
		t.Errorf("the eviction backoff survived the heartbeat: %s left", wait)
	}
	f.clock.Step(pending)
	f.sync()
	if len(f.evicted()) != 3 {
		t.Errorf("evictions = %d after the heartbeat, want still 3", len(f.evicted()))
	}

	// a falls silent again: eviction resumes with a fresh backoff.
	f.clock.Step(10 * time.Minute)
	if delay := f.sync(); len(f.evicted()) != 4 || delay != time.Second {
		t.Errorf("after a new time-out: %d evictions and a %s backoff, want 4 and 1s", len(f.evicted()), delay)
	}
}

func TestFailedEvictionIsCountedDespiteAConflict(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())
	f.failEvictions(tooManyRequests(0))
	conflicts := 1
	f.erClient.PrependReactor("update", "evictionrequests", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() == "status" && conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupName, Resource: "evictionrequests"}, podUID, nil)
		}
		return false, nil, nil
	})
	f.sync()
	if got := f.get().Status.PodEvictionStatus; got == nil || got.FailedAPIEvictionCounter != 1 {
		t.Errorf("podEvictionStatus = %+v after a conflicting write, want the failure counted", got)
	}
}

// gracefulShutdown ends a pod as the kubelet does in a graceful node
// shutdown.
func gracefulShutdown(p *corev1.Pod) {
	p.Status.Phase = corev1.PodFailed
	p.Status.Reason = "Terminated"
	p.Status.Message = "Pod was terminated in response to imminent node shutdown."
}

// completionCases are the cases of TestCompletion: the pod in the cache and on the server, the requesters and policy, and how the request must complete (no reason: not yet).
var completionCases = map[string]struct {
	cachedPod, livePod *corev1.Pod
	requesters         []v1alpha1.Requester
	policy             v1alpha1.EvictionRequestCancellationPolicy
	wantReason         string
	wantMessage        string
}{
	"pod deleted":                 {wantReason: v1alpha1.CompleteReasonPodDeleted, wantMessage: "Pod web-0 was deleted."},
	"pod replaced under its name": {cachedPod: newPod(func(p *corev1.Pod) { p.UID = "new-uid" }), livePod: newPod(func(p *corev1.Pod) { p.UID = "new-uid" }), wantReason: v1alpha1.CompleteReasonPodDeleted, wantMessage: "now has UID new-uid"},
	"pod succeeded":               {cachedPod: newPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), livePod: newPod(), wantReason: v1alpha1.CompleteReasonPodTerminated, wantMessage: "reached phase Succeeded"},
	"pod ended by a graceful node shutdown": {
		cachedPod: newPod(gracefulShutdown), livePod: newPod(gracefulShutdown),
		wantReason: v1alpha1.CompleteReasonPodTerminated, wantMessage: "Failed (Terminated: Pod was terminated in response to imminent node shutdown.)",
	},
	"every requester withdrew": {cachedPod: newPod(), livePod: newPod(), requesters: []v1alpha1.Requester{}, policy: v1alpha1.Allow, wantReason: v1alpha1.CompleteReasonCanceled},
	"no requester under Forbid waits for the interceptor": {
		cachedPod: newPod(), livePod: newPod(), requesters: []v1alpha1.Requester{}, policy: v1alpha1.Forbid,
	},
	"a pod missing from a lagging cache is looked up live": {livePod: newPod()},
}

func TestCompletion(t *testing.T) {
	cases := completionCases
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			if tc.livePod != nil {
				if err := f.kube.Tracker().Add(tc.livePod); err != nil {
					t.Fatal(err)
				}
			}
			if tc.cachedPod != nil {
				if err := f.podIndexer.Add(tc.cachedPod); err != nil {
					t.Fatal(err)
				}
			}
			er := newEvictionRequest("a.example.com", "b.example.com")
			er.Status.ActiveInterceptorName = ptr.To("b.example.com")
			er.Status.ActiveInterceptorCompleted = false
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(start))
			er.Status.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(start.Add(time.Hour)))
			if tc.requesters != nil {
				er.Spec.Requesters = tc.requesters
				er.Status.EvictionRequestCancellationPolicy = ptr.To(tc.policy)
			}
			f.addEvictionRequest(er)

			f.sync()
			got := f.get()
			condition := apimeta.FindStatusCondition(got.Status.Conditions, string(v1alpha1.EvictionRequestComplete))
			if tc.wantReason == "" {
				if condition != nil {
					t.Fatalf("completed with %+v, want the request to go on", condition)
				}
				if activeName(got) != "b.example.com" {
					t.Errorf("active interceptor = %q, want b still in charge", activeName(got))
				}
				return
			}
			if condition == nil || condition.Status != metav1.ConditionTrue || condition.Reason != tc.wantReason ||
				!strings.Contains(condition.Message, tc.wantMessage) || !condition.LastTransitionTime.Time.Equal(start) || condition.ObservedGeneration != 1 {
				t.Fatalf("Complete condition = %+v, want True with reason %s and a message with %q", condition, tc.wantReason, tc.wantMessage)
			}
			if got.Status.ActiveInterceptorName != nil || got.Status.ExpectedInterceptorFinishTime != nil || got.Status.ActiveInterceptorCompleted {
				t.Errorf("the active interceptor fields survived completion: %+v", got.Status)
			}
			if len(f.evicted()) != 0 {
				t.Errorf("evicted %v while completing", f.evicted())
			}
			wantEvent := "Normal " + EventCompleted
			if tc.wantReason == v1alpha1.CompleteReasonCanceled {
				wantEvent = "Normal " + EventCanceled
			}
			f.expectEvents(wantEvent)

			// A complete request is left alone.
			if requeue := f.sync(); requeue != 0 || len(f.events()) != 0 {
				t.Errorf("a complete request was synced again: requeue %s", requeue)
			}
		})
	}
}

func TestPodsTheAPIMustNotEvict(t *testing.T) {
	cases := map[string]struct {
		pod         *corev1.Pod
		wantMessage string
		wantEvent   bool
	}{
		"terminating": {
			pod:         newPod(func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(start)) }),
			wantMessage: "is terminating",
		},
		"DaemonSet": {
			pod: newPod(func(p *corev1.Pod) {
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "fluentd", UID: "ds", Controller: ptr.To(true)}}
			}),
			wantMessage: "is a DaemonSet pod", wantEvent: true,
		},
		"mirror": {
			pod:         newPod(func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"} }),
			wantMessage: "is a mirror pod", wantEvent: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.addPod(tc.pod)
			f.addEvictionRequest(newEvictionRequest())
			for i := 0; i < 3; i++ {
				if requeue := f.sync(); requeue != 0 {
					t.Errorf("requeue = %s, want none", requeue)
				}
			}
			if len(f.evicted()) != 0 {
				t.Errorf("evicted %v", f.evicted())
			}
			if msg := f.get().Status.Message; !strings.Contains(msg, tc.wantMessage) {
				t.Errorf("status.message = %q, want %q", msg, tc.wantMessage)
			}
			var want []string
			if tc.wantEvent {
				want = []string{"Warning " + EventEvictionNotSupported}
			}
			f.expectEvents(want...)
		})
	}
}

func TestEnqueuePodFindsTheRequestByUID(t *testing.T) {
	f := newFixture(t)
	f.addEvictionRequest(newEvictionRequest())
	other := newPod(func(p *corev1.Pod) { p.Name, p.UID = "other", "no-request" })

	f.controller.enqueuePod(other)
	f.controller.enqueuePod(cache.DeletedFinalStateUnknown{Key: ns + "/web-0", Obj: newPod()})
	if f.controller.queue.Len() != 1 {
		t.Fatalf("queue has %d keys, want only the request of web-0", f.controller.queue.Len())
	}
	got, _ := f.controller.queue.Get()
	if got != key {
		t.Errorf("queued %q, want %q", got, key)
	}
}

func TestMetricsSnapshot(t *testing.T) {
	f := newFixture(t)
	f.addPod(newPod(func(p *corev1.Pod) {
		// Names the server would refuse are not reported by name: anyone
		// who may create a pod could otherwise add series at will.
		p.Annotations = map[string]string{v1alpha1.PodInterceptorsAnnotation: "a.example.com, b.example.com, Not_Valid, stolen.k8s.io"}
	}))
	er := newEvictionRequest("a.example.com", "b.example.com")
	er.Status.ActiveInterceptorName = ptr.To("b.example.com")
	f.addEvictionRequest(er)
	done := newEvictionRequest()
	done.Name = "done"
	// The complete request is older, and not the oldest in progress.
	done.CreationTimestamp = metav1.NewTime(start.Add(-time.Hour))
	done.Status.Conditions = []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue}}
	if err := f.erIndexer.Add(done); err != nil {
		t.Fatal(err)
	}

	want := metrics.Snapshot{
		ActiveInterceptors: map[string]int{"b.example.com": 1},
		ActiveRequesters:   map[string]int{"nodemaintenance.k8s.io": 1},
		PodInterceptors:    map[string]int{"a.example.com": 1, "b.example.com": 1, metrics.InvalidLabelValue: 2},
		OldestInProgress:   start,
	}
	if diff := cmp.Diff(want, f.controller.MetricsSnapshot()); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

// TestAnUnresponsiveClusterTimesTheEvictionOut points the controller at a
// kube-apiserver that never answers, as one whose etcd is frozen: the
// eviction call ends at the call timeout, is counted as a failed attempt and
// retried after a backoff, instead of holding the worker.
func TestAnUnresponsiveClusterTimesTheEvictionOut(t *testing.T) {
	f := newFixture(t)
	thaw := make(chan struct{})
	frozen := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-thaw:
		}
	}))
	defer frozen.Close()
	defer close(thaw)
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: frozen.URL})
	if err != nil {
		t.Fatal(err)
	}
	f.controller.kubeClient = kube
	f.controller.callTimeout = 100 * time.Millisecond
	f.addPod(newPod())
	f.addEvictionRequest(newEvictionRequest())

	synced := make(chan time.Duration, 1)
	go func() {
		requeue, err := f.controller.sync(f.ctx, key)
		if err != nil {
			t.Errorf("sync: %v", err)
		}
		synced <- requeue
	}()
	select {
	case requeue := <-synced:
		if requeue <= 0 {
			t.Errorf("a timed-out eviction is not retried: requeue %s", requeue)
		}
	case <-time.After(time.Minute):
		t.Fatal("the eviction call never returned: it has no timeout")
	}
	er := f.get()
	if er.Status.PodEvictionStatus == nil || er.Status.PodEvictionStatus.FailedAPIEvictionCounter != 1 {
		t.Errorf("the timed-out eviction is not counted: %+v", er.Status.PodEvictionStatus)
	}
	if !strings.Contains(er.Status.Message, "deadline") && !strings.Contains(er.Status.Message, "Timeout") {
		t.Errorf("status.message does not say the call timed out: %q", er.Status.Message)
	}
}
