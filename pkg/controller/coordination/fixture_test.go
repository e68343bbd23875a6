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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
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

	// Cached as evictionrequest-apiserver caches them: requests without
	// their metadata (the node drain's annotations aside, which this
	// controller does not read), pods trimmed to what the controller
	// declares it reads.
	cachedPods := cachetransform.TrimPodKeeping(PodAnnotationsRead...)
	erInformer := cachetest.EvictionRequestInformers(f.erClient, cachetransform.StripMetadataKeeping()).Coordination().V1alpha1().EvictionRequests()
	podInformer := cachetest.KubeInformers(f.kube, cachedPods).Core().V1().Pods()
	c, err := NewController(ctx, f.kube, f.erClient.CoordinationV1alpha1(), erInformer, podInformer, f.clock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(100)
	c.recorder = f.recorder
	f.controller = c
	if f.erIndexer, err = cachetest.Cache(erInformer.Informer(), cachetransform.StripMetadataKeeping()); err != nil {
		t.Fatal(err)
	}
	if f.podIndexer, err = cachetest.Cache(podInformer.Informer(), cachedPods); err != nil {
		t.Fatal(err)
	}
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
