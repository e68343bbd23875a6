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

package participant

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// discoveryServer serves the discovery of a cluster that serves
// evictionrequests in the group versions served, and nothing else.
func discoveryServer(t *testing.T, served ...evictionapi.API) *rest.Config {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, api := range served {
			if r.URL.Path == "/apis/"+string(api) {
				list := metav1.APIResourceList{GroupVersion: string(api), APIResources: []metav1.APIResource{{Name: "evictionrequests", Namespaced: true, Kind: "EvictionRequest"}}}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(list)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(server.Close)
	return &rest.Config{Host: server.URL, QPS: 50, Burst: 100}
}

// NewForConfig speaks the API the cluster serves, ours first when both are,
// unless told which.
func TestNewForConfigPicksTheAPIByDiscovery(t *testing.T) {
	for name, tc := range map[string]struct {
		served []evictionapi.API
		want   evictionapi.API
		asked  evictionapi.API
	}{
		"only lifecycle.k8s.io":            {served: []evictionapi.API{evictionapi.Lifecycle}, want: evictionapi.Lifecycle},
		"only coordination.k8s.io":         {served: []evictionapi.API{evictionapi.Coordination}, want: evictionapi.Coordination},
		"both: ours, someone installed it": {served: []evictionapi.API{evictionapi.Lifecycle, evictionapi.Coordination}, want: evictionapi.Coordination},
		"both, lifecycle asked for":        {served: []evictionapi.API{evictionapi.Lifecycle, evictionapi.Coordination}, asked: evictionapi.Lifecycle, want: evictionapi.Lifecycle},
	} {
		t.Run(name, func(t *testing.T) {
			name := "descheduler.example.com"
			if tc.want == evictionapi.Lifecycle {
				name = "example.com/descheduler"
			}
			p, err := NewForConfig(name, discoveryServer(t, tc.served...), tc.asked, requester.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.API() != tc.want || p.Name() != name {
				t.Errorf("participant %s on %s, want %s on %s", p.Name(), p.API(), name, tc.want)
			}
		})
	}
	if _, err := NewForConfig("descheduler.example.com", discoveryServer(t), evictionapi.Auto, requester.Options{}); err == nil {
		t.Error("NewForConfig found an API on a cluster that serves none")
	}
	if _, err := NewForConfig("Not A Name", discoveryServer(t, evictionapi.Coordination), evictionapi.Auto, requester.Options{}); err == nil {
		t.Error("NewForConfig accepted a requester name the API refuses")
	}
}

// One participant of coordination.k8s.io requests, reads (from the API,
// then from its informer) and withdraws, leaving other requesters alone.
func TestCoordinationParticipant(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pod := wrappers.MakePod("web-0").Obj()
	kube := k8sfake.NewClientset(pod)
	evr := erfake.NewClientset(wrappers.MakeEvictionRequest(pod, "other.example.com").Obj())
	p, err := New(evictionapi.Coordination, "drain.example.com", kube, evr, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	status, err := p.Status(ctx, pod.Namespace, pod.UID)
	if err != nil || !status.Exists || status.Requested || status.OtherRequesters != 1 || !status.NeedsRequest() {
		t.Errorf("status of a request of another requester: %+v, %v", status, err)
	}
	// The fake clientset does not apply: the test writes what the server
	// would store, and checks Withdraw and the informer's Status.
	er := wrappers.MakeEvictionRequest(pod, "other.example.com", "drain.example.com").Active("surge.example.com").Obj()
	if _, err := evr.CoordinationV1alpha1().EvictionRequests(pod.Namespace).Update(ctx, er, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	factories := Informers{EvictionRequests: cachetest.EvictionRequestInformers(evr, cachetest.Whole)}
	informed := startInformed(ctx, t, p, factories)
	status, err = p.Status(ctx, pod.Namespace, pod.UID)
	if err != nil || !informed || !status.Requested || status.NeedsRequest() || !status.HeldBy("surge.example.com") {
		t.Errorf("status from the informer: %+v, %v", status, err)
	}
	w, err := p.Withdraw(ctx, pod.Namespace, pod.UID)
	if err != nil || w != Withdrawn {
		t.Fatalf("Withdraw() = %v, %v", w, err)
	}
	got, _ := evr.CoordinationV1alpha1().EvictionRequests(pod.Namespace).Get(ctx, string(pod.UID), metav1.GetOptions{})
	if len(got.Spec.Requesters) != 1 || got.Spec.Requesters[0].Name != "other.example.com" {
		t.Errorf("requesters after the withdrawal: %v", got.Spec.Requesters)
	}
	if w, err := p.Withdraw(ctx, pod.Namespace, "no-such-pod"); err != nil || w != NotWithdrawn {
		t.Errorf("Withdraw() of a pod without a request = %v, %v", w, err)
	}
}

// A participant of lifecycle.k8s.io reads its own request and the pod's
// Eviction, found by the label the controller gives each participant.
func TestLifecycleParticipantReadsTheEvictionItTakesPartIn(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pod := wrappers.MakePod("web-0").Obj()
	const me, other = "example.com/drain", "example.com/descheduler"
	r, err := requester.NewLifecycle(me, k8sfake.NewClientset(), requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	own := wrappers.MakeLifecycleRequest(r.RequestName(pod.UID), pod, me).Obj()
	ev := wrappers.MakeEviction("pod-web-0", pod).Label(me, string(lifecyclev1alpha1.EvictionParticipantRoleRequester)).
		Label(other, string(lifecyclev1alpha1.EvictionParticipantRoleRequester)).
		TargetResponder("example.com/surge", 10000, lifecyclev1alpha1.ResponderStateActive).Started("example.com/surge", lifecycleStart).Obj()
	unrelated := wrappers.MakeEviction("pod-web-1", wrappers.MakePod("web-1").UID("uid-web-1").Obj()).Label(me, "Requester").Obj()
	kube := k8sfake.NewClientset(pod, own, ev, unrelated)
	p, err := New(evictionapi.Lifecycle, me, kube, nil, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Status{Request: own.Name, Exists: true, Requested: true, OtherRequesters: 1, ActiveInterceptor: "example.com/surge", LastHeartbeat: &lifecycleStart}
	live, err := p.Status(ctx, pod.Namespace, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	startInformed(ctx, t, p, Informers{Kube: cachetest.KubeInformers(kube, cachetest.Whole)})
	cached, err := p.Status(ctx, pod.Namespace, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	for source, got := range map[string]Status{"the API": live, "the informers": cached} {
		if got.Request != want.Request || got.Exists != want.Exists || got.Requested != want.Requested || got.OtherRequesters != want.OtherRequesters ||
			got.ActiveInterceptor != want.ActiveInterceptor || !got.HeldBy("example.com/surge") {
			t.Errorf("status read from %s: %+v, want %+v", source, got, want)
		}
	}
	if w, err := p.Withdraw(ctx, pod.Namespace, pod.UID); err != nil || w != Withdrawn {
		t.Errorf("Withdraw() = %v, %v", w, err)
	}
}

// startInformed informs p from factories, starts them until the test ends
// and waits for them; it is true when p handed informers over.
func startInformed(ctx context.Context, t *testing.T, p Participant, factories Informers) bool {
	t.Helper()
	informerList, err := p.Inform(factories)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	type factory interface {
		Start(<-chan struct{})
		Shutdown()
	}
	var started []factory
	for _, f := range []factory{factories.Kube, factories.EvictionRequests} {
		if f != nil {
			f.Start(ctx.Done())
			started = append(started, f)
		}
	}
	t.Cleanup(func() {
		cancel()
		for _, f := range started {
			f.Shutdown()
		}
	})
	synced := make([]cache.InformerSynced, 0, len(informerList))
	for _, i := range informerList {
		synced = append(synced, i.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("the informers did not sync")
	}
	return len(informerList) > 0
}

// A request that is not there, read from the API, does not exist: client-go
// hands back an empty object beside NotFound, which once read as a request
// that exists and asks for nothing (a node drain then waited for ever on a
// pod force-deleted with its request).
func TestLifecycleParticipantReadsNoRequestAsNone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pod := wrappers.MakePod("web-0").Obj()
	p, err := New(evictionapi.Lifecycle, "example.com/drain", k8sfake.NewClientset(), nil, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Status(ctx, pod.Namespace, pod.UID)
	if err != nil || got.Exists || got.Requested || got.Complete {
		t.Errorf("Status() of a request that is not there = %+v, %v; want one that does not exist", got, err)
	}
}
