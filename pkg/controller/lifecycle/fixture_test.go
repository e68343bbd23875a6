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

package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

var start = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

const requester = "acme.io/drain"

// fixture is a controller whose informer caches the test fills by hand, so
// that every sync sees exactly the state the test set up; the fake
// clientset records what the controller writes.
type fixture struct {
	t          testing.TB
	ctx        context.Context
	clock      *testingclock.FakeClock
	kube       *k8sfake.Clientset
	controller *Controller
	recorder   *record.FakeRecorder
	evictions  cache.Indexer
	requests   cache.Indexer
	pods       cache.Indexer
}

func newFixture(t testing.TB, objects ...runtime.Object) *fixture {
	t.Helper()
	metrics.Register()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, ctx: ctx, clock: testingclock.NewFakeClock(start), kube: k8sfake.NewClientset()}
	factory := cachetest.KubeInformers(f.kube, cachedAsTheBinary)
	evictions, requests, pods := factory.Lifecycle().V1alpha1().Evictions(), factory.Lifecycle().V1alpha1().EvictionRequests(), factory.Core().V1().Pods()
	c, err := NewController(ctx, f.kube, evictions, requests, pods, f.clock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(100)
	c.recorder = f.recorder
	f.controller = c
	f.evictions, f.requests, f.pods = cacheOf(t, evictions.Informer()), cacheOf(t, requests.Informer()), cacheOf(t, pods.Informer())
	for _, obj := range objects {
		f.add(obj)
	}
	return f
}

// add stores obj in kube-apiserver and in the cache.
func (f *fixture) add(obj runtime.Object) {
	f.t.Helper()
	if err := f.kube.Tracker().Add(obj); err != nil {
		f.t.Fatal(err)
	}
	f.cache(obj)
}

// update replaces obj in kube-apiserver and in the cache.
func (f *fixture) update(obj runtime.Object) {
	f.t.Helper()
	if err := f.kube.Tracker().Update(lifecyclev1alpha1.SchemeGroupVersion.WithResource(resourceOf(obj)), obj, "shop"); err != nil {
		f.t.Fatal(err)
	}
	f.cache(obj)
}

// resourceOf is the resource of a lifecycle.k8s.io object.
func resourceOf(obj runtime.Object) string {
	if _, ok := obj.(*lifecyclev1alpha1.Eviction); ok {
		return "evictions"
	}
	return "evictionrequests"
}

// cachedAsTheBinary is the transform of evictionrequest-controller's
// informers, as far as the controller reads them: pods trimmed, and of
// managedFields the entries it declares it reads (ManagersTakenOver).
var cachedAsTheBinary = cachetransform.TrimPodsStripManagedFieldsBut(PodAnnotationsRead, ManagersTakenOver...)

// cacheOf is the cache of informer, for the fixture to fill as the binary
// fills it.
func cacheOf(t testing.TB, informer cache.SharedIndexInformer) cache.Indexer {
	t.Helper()
	indexer, err := cachetest.Cache(informer, cachedAsTheBinary)
	if err != nil {
		t.Fatal(err)
	}
	return indexer
}

// cache puts obj in its informer's cache only, as
// evictionrequest-controller caches it.
func (f *fixture) cache(obj runtime.Object) {
	f.t.Helper()
	var err error
	switch o := obj.(type) {
	case *corev1.Pod:
		err = f.pods.Update(o)
	case *lifecyclev1alpha1.Eviction:
		err = f.evictions.Update(o)
	case *lifecyclev1alpha1.EvictionRequest:
		err = f.requests.Update(o)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// syncEviction runs one sync of the Eviction name, refreshes the cache with
// its write, and returns the Eviction as stored and the requeue delay.
func (f *fixture) syncEviction(name string) (*lifecyclev1alpha1.Eviction, time.Duration) {
	f.t.Helper()
	resync, err := f.controller.syncEviction(f.ctx, "shop/"+name)
	if err != nil {
		f.t.Fatalf("syncEviction: %v", err)
	}
	ev := f.eviction(name)
	f.cache(ev)
	return ev, resync
}

func (f *fixture) eviction(name string) *lifecyclev1alpha1.Eviction {
	f.t.Helper()
	ev, err := f.kube.LifecycleV1alpha1().Evictions("shop").Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return ev
}

func (f *fixture) request(name string) *lifecyclev1alpha1.EvictionRequest {
	f.t.Helper()
	er, err := f.kube.LifecycleV1alpha1().EvictionRequests("shop").Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return er
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

// states lists the responders of ev as "<name>=<state>", in order.
func states(ev *lifecyclev1alpha1.Eviction) []string {
	var out []string
	for _, r := range ev.Status.TargetResponders {
		out = append(out, r.Name+"="+string(r.State))
	}
	return out
}

// conditionsOf lists the conditions of an object as "<type>=<status>/<reason>".
func conditionsOf(conditions []metav1.Condition) []string {
	var out []string
	for _, c := range conditions {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return out
}
