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

package surge

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor/interceptortest"
)

const (
	ours   = "surge-a.example.com"
	theirs = "surge-b.example.com"
	gone   = "surge-gone.example.com"
	// poll is the PollInterval of the fixture's Surger.
	poll = 2 * time.Second
)

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fixture is a Surger named ours on fake clientsets and a fake clock, whose
// caches the test fills and refreshes by hand, as Kubernetes' controller
// tests do: each call of Handle sees exactly the caches the test set up.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	kube     *kubefake.Clientset
	clock    *testingclock.FakeClock
	recorder *record.FakeRecorder
	factory  informers.SharedInformerFactory
	surger   *Surger
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, ctx: ctx, kube: kubefake.NewClientset(), clock: testingclock.NewFakeClock(start), recorder: record.NewFakeRecorder(100)}
	// Cached as the surge interceptor caches them.
	f.factory = cachetest.KubeInformers(f.kube, CacheTransform)
	f.surger = New(Config{
		Name: ours, Kube: f.kube, EvictionRequests: erfake.NewClientset(), Informers: f.factory,
		Recorder: f.recorder, Clock: f.clock, PollInterval: poll, CallTimeout: time.Second,
	})
	return f
}

// indexerOf is the cache of the kind of obj.
func (f *fixture) indexerOf(obj runtime.Object) cache.Indexer {
	var informer cache.SharedIndexInformer
	switch obj.(type) {
	case *corev1.Pod:
		informer = f.factory.Core().V1().Pods().Informer()
	case *appsv1.ReplicaSet:
		informer = f.factory.Apps().V1().ReplicaSets().Informer()
	case *appsv1.Deployment:
		informer = f.factory.Apps().V1().Deployments().Informer()
	default:
		f.t.Fatalf("no cache for %T", obj)
	}
	indexer, err := cachetest.Cache(informer, CacheTransform)
	if err != nil {
		f.t.Fatal(err)
	}
	return indexer
}

// add stores objects in the API and in the caches.
func (f *fixture) add(objs ...runtime.Object) {
	f.t.Helper()
	for _, obj := range objs {
		if err := f.kube.Tracker().Add(obj); err != nil {
			f.t.Fatal(err)
		}
		if err := f.indexerOf(obj).Add(obj); err != nil {
			f.t.Fatal(err)
		}
	}
}

// cache puts obj into the cache only, as a cache that lags behind the API.
func (f *fixture) cache(obj runtime.Object) {
	f.t.Helper()
	if err := f.indexerOf(obj).Update(obj); err != nil {
		f.t.Fatal(err)
	}
}

// refresh copies what the API has into the caches, as the informers would.
func (f *fixture) refresh() {
	f.t.Helper()
	pods, _ := f.kube.CoreV1().Pods("").List(f.ctx, metav1.ListOptions{})
	for i := range pods.Items {
		f.cache(&pods.Items[i])
	}
	deployments, _ := f.kube.AppsV1().Deployments("").List(f.ctx, metav1.ListOptions{})
	for i := range deployments.Items {
		f.cache(&deployments.Items[i])
	}
}

// handle runs the Handler once on the request of pod, held by ours.
func (f *fixture) handle(pod *corev1.Pod) (interceptor.Result, *interceptortest.Recorder) {
	f.t.Helper()
	req, recorder := interceptortest.NewRequest(wrappers.MakeEvictionRequest(pod, "drain.example.com").Interceptors(ours).Active(ours).Obj())
	result, err := f.surger.Handle(f.ctx, req)
	if err != nil {
		f.t.Fatalf("Handle() = %v", err)
	}
	return result, recorder
}

func (f *fixture) deployment(name string) *appsv1.Deployment {
	f.t.Helper()
	dep, err := f.kube.AppsV1().Deployments(wrappers.DefaultNamespace).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return dep
}

func (f *fixture) pod(name string) *corev1.Pod {
	f.t.Helper()
	pod, err := f.kube.CoreV1().Pods(wrappers.DefaultNamespace).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return pod
}

// events are the reasons of the events recorded since the last call.
func (f *fixture) events() []string {
	var reasons []string
	for {
		select {
		case e := <-f.recorder.Events:
			reasons = append(reasons, strings.Fields(e)[1])
		default:
			return reasons
		}
	}
}

// heldBy is the request of pod, held by interceptor under policy.
func heldBy(pod *corev1.Pod, interceptor string, policy v1alpha1.EvictionRequestCancellationPolicy) *v1alpha1.EvictionRequest {
	return wrappers.MakeEvictionRequest(pod, "drain.example.com").Interceptors(interceptor).Active(interceptor).Policy(policy).Obj()
}
