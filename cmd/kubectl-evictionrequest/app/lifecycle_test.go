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

package app

import (
	"context"
	"strings"
	"testing"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

const appResponder = "shop.example.com/drainer"

func TestLifecycleStatusShowsTheRespondersAndRequesters(t *testing.T) {
	pod := testPod("web-0", "node-a").Responders(wrappers.Responder(appResponder, 500)).Obj()
	own := wrappers.MakeLifecycleRequest("web-0-kubectl", pod, DefaultLifecycleRequesterName).Created(now.Add(-time.Minute)).Obj()
	other := wrappers.MakeLifecycleRequest("web-0-descheduler", pod, "descheduler.example.com/x").Withdrawn().Created(now.Add(-2 * time.Minute)).Obj()
	viaEvictionAPI := wrappers.MakeLifecycleRequest("web-0-bridge", pod, bridge.LifecycleRequester).
		Annotation(bridge.CallersAnnotation, "system:admin,system:serviceaccount:kube-system:cluster-autoscaler").Created(now.Add(-time.Minute)).Obj()
	ev := wrappers.MakeEviction("pod-1-web-0", pod).Created(now.Add(-time.Minute)).
		TargetResponder("surge.example.com/surge", 10000, lifecyclev1alpha1.ResponderStateCompleted).
		TargetResponder(appResponder, 500, lifecyclev1alpha1.ResponderStateActive).
		TargetResponder(lifecycleutil.Evictor, lifecycleutil.EvictorPriority, lifecyclev1alpha1.ResponderStateInactive).
		Started(appResponder, now.Add(-time.Minute)).Heartbeat(appResponder, now.Add(-12*time.Second)).
		ResponderMessage(appResponder, "closing connections").Obj()
	o, out, _ := testLifecycleOptions(t, pod, own, other, viaEvictionAPI, ev)
	s := &StatusOptions{Options: o, Pods: []string{"web-0"}, Events: 5, Clock: testingclock.NewFakePassiveClock(now)}
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Eviction:", "shop/pod-1-web-0",
		"web-0 (node node-a)",
		DefaultLifecycleRequesterName, "descheduler.example.com/x (withdrawn)",
		"Responders:", "highest priority first",
		"[10000] surge.example.com/surge",
		"[500] " + appResponder, "active, heartbeat 12s ago",
		"[100] " + lifecycleutil.Evictor,
		"closing connections",
		"web-0-descheduler", "web-0-kubectl",
		"requested through the eviction API by system:admin, system:serviceaccount:kube-system:cluster-autoscaler\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out.String(), "[10000]"), strings.Index(out.String(), "[100] "); i > j {
		t.Errorf("the responders are not in the order they run:\n%s", out)
	}
}

func TestLifecycleStatusOfAPodWithoutRequests(t *testing.T) {
	o, _, _ := testLifecycleOptions(t, testPod("web-0", "node-a").Obj())
	s := &StatusOptions{Options: o, Pods: []string{"web-0"}}
	if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "pod shop/web-0 has no EvictionRequest") {
		t.Errorf("Run() = %v, want the pod named as having no EvictionRequest", err)
	}
}

func TestLifecycleRequestAndWithdraw(t *testing.T) {
	pod := testPod("web-0", "n").Obj()
	o, out, kube := testLifecycleOptions(t, pod)
	p := &PodsOptions{Options: o, Pods: []string{"web-0"}}
	if err := p.RunRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := requester.NewLifecycle(DefaultLifecycleRequesterName, kube, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := r.RequestName(pod.UID)
	if !strings.Contains(out.String(), "pod/web-0: eviction requested (evictionrequest/"+name+")") {
		t.Errorf("output %q", out)
	}
	requests := kube.LifecycleV1alpha1().EvictionRequests("shop")
	er, err := requests.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || er.Spec.Intent != lifecyclev1alpha1.EvictionRequestIntentEviction || er.Spec.Requester != DefaultLifecycleRequesterName {
		t.Fatalf("request %v, %v", er, err)
	}
	out.Reset()
	if err := p.RunWithdraw(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "pod/web-0: withdrew from evictionrequest/"+name+" (the request is canceled)") {
		t.Errorf("output %q", out)
	}
	if er, err = requests.Get(context.Background(), name, metav1.GetOptions{}); err != nil || er.Spec.Intent != lifecyclev1alpha1.EvictionRequestIntentWithdrawn {
		t.Errorf("request after the withdrawal: %v, %v", er, err)
	}
	out.Reset()
	if err := p.RunWithdraw(context.Background()); err != nil || !strings.Contains(out.String(), "is not a requester of evictionrequest/"+name+" (never was, or withdrew already)") {
		t.Errorf("a second withdrawal = %v, %q", err, out)
	}
}
