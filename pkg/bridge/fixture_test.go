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

package bridge

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// fixture is a bridge of one API on fake clientsets and informers it
// starts, in the test's synctest bubble: time is the bubble's, and
// synctest.Wait lets the caches catch up with a write.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	kube     *k8sfake.Clientset
	evr      *erfake.Clientset
	recorder *record.FakeRecorder
	bridge   *Bridge
	p        participant.Participant
	// reviewer, when set, changes each request review sends: the TLS
	// state of kube-apiserver's connection, say.
	reviewer func(*http.Request)
}

// newFixture is a bridge of api on objects, in wrappers.DefaultNamespace,
// which opted in (unless objects hold a namespace of that name), and the
// namespaces objects hold.
func newFixture(t *testing.T, api evictionapi.API, objects ...runtime.Object) *fixture {
	t.Helper()
	return newFixtureWith(t, api, Config{}, objects...)
}

// newFixtureWith is newFixture with the Callers, WebhookConfiguration and
// Webhooks of cfg.
func newFixtureWith(t *testing.T, api evictionapi.API, cfg Config, objects ...runtime.Object) *fixture {
	t.Helper()
	kubeObjects, requests := []runtime.Object{optedInNamespace(wrappers.DefaultNamespace)}, []runtime.Object(nil)
	for _, obj := range objects {
		switch obj := obj.(type) {
		case *corev1.Namespace:
			if obj.Name == wrappers.DefaultNamespace {
				kubeObjects[0] = obj
			} else {
				kubeObjects = append(kubeObjects, obj)
			}
		case *corev1.Pod, *admissionregistrationv1.ValidatingWebhookConfiguration:
			kubeObjects = append(kubeObjects, obj)
		default:
			if api == evictionapi.Lifecycle {
				kubeObjects = append(kubeObjects, obj)
			} else {
				requests = append(requests, obj)
			}
		}
	}
	f := &fixture{t: t, ctx: t.Context(), kube: k8sfake.NewClientset(kubeObjects...), evr: erfake.NewClientset(requests...),
		recorder: record.NewFakeRecorder(20)}
	name := CoordinationRequester
	if api == evictionapi.Lifecycle {
		name = LifecycleRequester
	}
	var err error
	if f.p, err = participant.New(api, name, f.kube, f.evr, requester.Options{CallTimeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	// Cached as the binaries cache them: pods trimmed and the rest without
	// managedFields but the bridge's, the stricter of the two; requests
	// whole (the bridge reads their annotations).
	kube := cachetest.KubeInformers(f.kube, cachetransform.TrimPodsStripManagedFieldsBut(PodAnnotationsRead, ManagersRead...))
	factories := participant.Informers{Kube: kube, EvictionRequests: cachetest.EvictionRequestInformers(f.evr, cachetest.Whole)}
	pods := factories.Kube.Core().V1().Pods()
	cfg.Participant, cfg.Informers, cfg.Pods, cfg.Kube, cfg.Recorder, cfg.Clock = f.p, factories, pods.Lister(), f.kube, f.recorder, clock.RealClock{}
	cfg.Namespaces, cfg.Webhooks = kube.Core().V1().Namespaces(), kube.Admissionregistration().V1().ValidatingWebhookConfigurations()
	cfg.CallTimeout, cfg.Exempt = time.Second, []string{"system:serviceaccount:evictionrequest-system:evictionrequest-apiserver"}
	f.bridge, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods.Informer()
	ctx, cancel := context.WithCancel(f.ctx)
	factories.Kube.Start(ctx.Done())
	factories.EvictionRequests.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		factories.Kube.Shutdown()
		factories.EvictionRequests.Shutdown()
	})
	if !cache.WaitForCacheSync(ctx.Done(), f.bridge.HasSynced, pods.Informer().HasSynced) {
		t.Fatal("caches did not sync")
	}
	return f
}

// optedInNamespace is the namespace name, opted in to the bridge.
func optedInNamespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{NamespaceLabel: NamespaceOptIn}}}
}

// decide asks the bridge about an eviction of pod by user, in a review
// kube-apiserver sent.
func (f *fixture) decide(pod *corev1.Pod, user string, dryRun bool) Decision {
	f.t.Helper()
	return f.decideEviction(Eviction{Namespace: pod.Namespace, Pod: pod.Name, User: user, DryRun: dryRun, Authenticated: true})
}

// decideEviction asks the bridge about e.
func (f *fixture) decideEviction(e Eviction) Decision {
	f.t.Helper()
	d, err := f.bridge.Decide(f.ctx, e)
	if err != nil {
		f.t.Fatalf("Decide: %v", err)
	}
	return d
}

// status is what the bridge's cache shows of pod's request, once the
// caches caught up.
func (f *fixture) status(pod *corev1.Pod) participant.Status {
	f.t.Helper()
	synctest.Wait()
	s, err := f.p.Status(f.ctx, pod.Namespace, pod.UID)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// writes lists the verbs and resources the bridge wrote.
func writes(actions []clienttesting.Action) []string {
	var w []string
	for _, a := range actions {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			w = append(w, fmt.Sprintf("%s %s", a.GetVerb(), a.GetResource().Resource))
		}
	}
	return w
}

func interceptedPod(name string) *wrappers.PodWrapper {
	return wrappers.MakePod(name).UID("uid-" + name).Interceptors("surge.example.com")
}

// objectsOf is pod and objects as runtime objects.
func objectsOf(pod *corev1.Pod, objects []any) []runtime.Object {
	out := []runtime.Object{pod}
	for _, obj := range objects {
		out = append(out, obj.(runtime.Object))
	}
	return out
}

// setActive makes name the active interceptor of pod's request, as the
// controller would, once admission copied the pod's interceptors into it,
// as the server's does.
func (f *fixture) setActive(pod *corev1.Pod, name string) {
	f.t.Helper()
	synctest.Wait()
	requests := f.evr.CoordinationV1alpha1().EvictionRequests(pod.Namespace)
	er, err := requests.Get(f.ctx, string(pod.UID), metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, interceptor := range v1alpha1.PodInterceptorNames(pod.Annotations) {
		er.Spec.Interceptors = append(er.Spec.Interceptors, v1alpha1.Interceptor{Name: interceptor})
	}
	if er, err = requests.Update(f.ctx, er, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	er.Status.ActiveInterceptorName = ptr.To(name)
	er.Status.HeartbeatTime = ptr.To(metav1.Now())
	if _, err := requests.UpdateStatus(f.ctx, er, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	synctest.Wait()
}

// evictorActive makes the default evictor the active responder of pod's
// Eviction, as the lifecycle controller would once no other responder is
// left, labelled with the bridge as a requester.
func (f *fixture) evictorActive(pod *corev1.Pod) {
	f.t.Helper()
	ev := wrappers.MakeEviction("pod-1-"+pod.Name, pod).Label(LifecycleRequester, string(lifecyclev1alpha1.EvictionParticipantRoleRequester)).
		TargetResponder("example.com/surge", 10000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder(lifecycleutil.Evictor, lifecycleutil.EvictorPriority, lifecyclev1alpha1.ResponderStateActive).
		Started(lifecycleutil.Evictor, time.Now()).Obj()
	if _, err := f.kube.LifecycleV1alpha1().Evictions(pod.Namespace).Create(f.ctx, ev, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	synctest.Wait()
}

// podAnnotated is true when the pod as stored carries key.
func (f *fixture) podAnnotated(pod *corev1.Pod, key string) bool {
	f.t.Helper()
	current, err := f.kube.CoreV1().Pods(pod.Namespace).Get(f.ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	_, ok := current.Annotations[key]
	return ok
}
