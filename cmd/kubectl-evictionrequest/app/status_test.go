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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

func TestStatusShowsTheInterceptorChain(t *testing.T) {
	hb := now.Add(-12 * time.Second)
	pod := testPod("db-0", "node-a").Obj()
	er := wrappers.MakeEvictionRequest(pod, "a.example.com", "b.example.com").Created(now.Add(-time.Minute)).
		Interceptors("fallback.example.com", "operator.example.com", "migrator.example.com").
		Active("operator.example.com").Heartbeat(hb).Message("draining connections").Policy(v1alpha1.Forbid).Obj()
	o, out, _, _ := testOptions(t, nil, nil)
	s := &StatusOptions{Options: o, Events: 5}
	s.print(out, statusEntry{record: coordinationStatus{s}.record(er, pod)}, now)
	for _, want := range []string{
		"Pod:", "db-0 (node node-a)",
		"State:", "Intercepted",
		"a.example.com, b.example.com",
		"[2] migrator.example.com  done",
		"[1] operator.example.com  active, heartbeat 12s ago, ETA -",
		"[0] fallback.example.com  waiting",
		"draining connections", "Forbid", "0 failed", "Events:  <none>",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

// A request the eviction API bridge made names whose eviction calls it
// stands for, and says when the bridge no longer requests it.
func TestStatusNamesWhoRequestedThroughTheEvictionAPI(t *testing.T) {
	pod := testPod("db-0", "node-a").Obj()
	caller := "system:serviceaccount:kube-system:cluster-autoscaler"
	for _, tc := range []struct {
		name       string
		requesters []string
		want       string
	}{
		{"requesting", []string{bridge.CoordinationRequester}, "requested through the eviction API by " + caller + "\n"},
		{"withdrawn", []string{"a.example.com"}, "requested through the eviction API by " + caller + " (withdrawn)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			er := wrappers.MakeEvictionRequest(pod, tc.requesters...).Annotation(bridge.CallersAnnotation, caller).Obj()
			o, out, _, _ := testOptions(t, nil, nil)
			s := &StatusOptions{Options: o}
			s.print(out, statusEntry{record: coordinationStatus{s}.record(er, pod)}, now)
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("status lacks %q:\n%s", tc.want, out)
			}
		})
	}
	o, out, _, _ := testOptions(t, nil, nil)
	s := &StatusOptions{Options: o}
	s.print(out, statusEntry{record: coordinationStatus{s}.record(wrappers.MakeEvictionRequest(pod, "a.example.com").Obj(), pod)}, now)
	if strings.Contains(out.String(), "requested through the eviction API") {
		t.Errorf("status of a request no eviction call made names the eviction API:\n%s", out)
	}
}

// status --node reads the requests of a node's pods with one LIST per
// namespace of the pods, not one GET per pod.
func TestStatusOfANodeListsEachNamespaceOnce(t *testing.T) {
	kubeObjects := []runtime.Object{wrappers.MakeNode("node-a").Obj()}
	var requests []runtime.Object
	for _, p := range []*corev1.Pod{
		testPod("web-0", "node-a").Obj(), testPod("web-1", "node-a").Obj(), testPod("web-2", "node-a").Obj(),
		testPod("db-0", "node-a").Namespace("data").Obj(), testPod("db-1", "node-a").Namespace("data").Obj(),
		testPod("elsewhere", "node-b").Obj(),
	} {
		kubeObjects = append(kubeObjects, p)
		requests = append(requests, wrappers.MakeEvictionRequest(p, "a.example.com").Obj())
	}
	o, out, _, evr := testOptions(t, kubeObjects, requests)
	s := &StatusOptions{Options: o, Node: "node-a"}
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, a := range evr.Actions() {
		calls[a.GetVerb()+" "+a.GetNamespace()]++
	}
	if calls["list shop"] != 1 || calls["list data"] != 1 || len(calls) != 2 {
		t.Errorf("calls to the EvictionRequest API %v, want one list of shop and one of data", calls)
	}
	for _, name := range []string{"web-0", "web-1", "web-2", "db-0", "db-1"} {
		if !strings.Contains(out.String(), name+" (node node-a)") {
			t.Errorf("the report lacks pod %s:\n%s", name, out)
		}
	}
	if strings.Contains(out.String(), "elsewhere") {
		t.Errorf("the report shows a pod of another node:\n%s", out)
	}
}
