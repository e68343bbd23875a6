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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
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
	kubeInformers := cachetest.KubeInformers(f.kube, kubeCached)
	podInformer := kubeInformers.Core().V1().Pods()
	erInformers := cachetest.EvictionRequestInformers(f.evr, requestsCached)
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
	f.nodes = cacheOf(t, kubeInformers.Core().V1().Nodes().Informer(), kubeCached)
	f.pods = cacheOf(t, podInformer.Informer(), kubeCached)
	f.ers = cacheOf(t, erInformer.Informer(), requestsCached)
	f.pdbs = cacheOf(t, kubeInformers.Policy().V1().PodDisruptionBudgets().Informer(), kubeCached)
	return f
}

// The transforms of the drain's caches, the stricter of the two binaries'
// where they differ: both trim pods; evictionrequest-controller drops the
// managedFields of the rest; evictionrequest-apiserver drops the metadata
// of requests but the drain's annotations.
var (
	kubeCached     = cachetransform.TrimPodsStripManagedFieldsBut(PodAnnotationsRead)
	requestsCached = cachetransform.StripMetadataKeeping(drain.RequestAnnotations...)
)

// cacheOf is the cache of informer, for the fixture to fill as a binary
// fills it.
func cacheOf(t testing.TB, informer cache.SharedIndexInformer, transform cache.TransformFunc) cache.Indexer {
	t.Helper()
	indexer, err := cachetest.Cache(informer, transform)
	if err != nil {
		t.Fatal(err)
	}
	return indexer
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
