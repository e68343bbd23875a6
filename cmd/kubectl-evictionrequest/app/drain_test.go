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
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

func TestDrainRefusesBadInputAndChangesNothing(t *testing.T) {
	nodes := []runtime.Object{wrappers.MakeNode("empty").Obj(), wrappers.MakeNode("busy").Obj(), managedPod("web-0", "busy").Obj(),
		wrappers.MakeNode("bare").Obj(), testPod("solo", "bare").Obj(), wrappers.MakeNode("cache").Obj(), managedPod("redis", "cache").EmptyDir("data").Obj()}
	for _, tc := range []struct {
		name  string
		nodes []string
		deny  []string
		want  []string
	}{
		{"a missing node", []string{"busy", "gone"}, nil, []string{`node "gone" not found`, "nothing was changed"}},
		{"a pod that declares no controller", []string{"busy", "bare"}, nil, []string{
			"node bare: cannot request the eviction of Pods that declare no controller (use --force to override): shop/solo", "nothing was changed"}},
		{"a pod with emptyDir data", []string{"cache"}, nil, []string{
			"node cache: cannot request the eviction of Pods with local storage (use --delete-emptydir-data to override): shop/redis", "nothing was changed"}},
		{"no node of the selector", nil, nil, []string{"no node matches --selector pool=none", "nothing was changed"}},
		{"no permission to cordon", []string{"busy"}, []string{"patch nodes"}, []string{"you are not allowed to", "patch nodes (to cordon the nodes)", "nothing was changed"}},
		{"no permission to delete the pods", []string{"busy"}, []string{"delete pods"}, []string{"delete pods in namespace shop", "nothing was changed"}},
		{"no permission to write requests", []string{"busy"}, []string{"patch evictionrequests"}, []string{"patch evictionrequests.coordination.k8s.io in namespace shop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, kube, evr := testOptions(t, nodes, nil, tc.deny...)
			d := &DrainOptions{Options: o, Nodes: tc.nodes, Cordon: true, drainer: &drain.Helper{}}
			if tc.nodes == nil {
				d.Selector = "pool=none"
			}
			_, err := d.prepare(context.Background())
			if err == nil {
				t.Fatal("prepare() accepted it")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if w := append(writes(kube), writes(evr)...); len(w) > 0 {
				t.Errorf("bad input made writes %v", w)
			}
		})
	}
}

// managedPod is a pod of a ReplicaSet on node.
func managedPod(name, node string) *wrappers.PodWrapper {
	return testPod(name, node).OwnedBy("apps/v1", "ReplicaSet", "web", "uid-rs-web")
}

// --force and --delete-emptydir-data let the drain evict what it refuses
// otherwise, with a warning naming the pods, and an empty node drains.
func TestDrainOverridesAndEmptyNodes(t *testing.T) {
	o, out, _, _ := testOptions(t, []runtime.Object{
		wrappers.MakeNode("busy").Label("pool", "blue").Obj(), wrappers.MakeNode("empty").Label("pool", "blue").Obj(),
		testPod("solo", "busy").Obj(), managedPod("redis", "busy").EmptyDir("data").Obj(),
	}, nil)
	d := &DrainOptions{Options: o, Selector: "pool=blue", drainer: &drain.Helper{Policy: drain.Policy{Force: true, DeleteEmptyDirData: true}}}
	selections, err := d.prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Nodes, ",") != "busy,empty" {
		t.Errorf("nodes of the selector %v", d.Nodes)
	}
	if got := len(selections["busy"].Evict); got != 2 {
		t.Errorf("%d pods to evict, want 2", got)
	}
	if got := len(selections["empty"].Evict); got != 0 {
		t.Errorf("%d pods to evict on the empty node", got)
	}
	d.printSkipped("busy", selections["busy"])
	for _, want := range []string{
		"Warning: node busy: evicting Pods that declare no controller: shop/solo",
		"Warning: node busy: evicting Pods that use emptyDir local storage, whose data is lost: shop/redis",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDrainSelectsAndReportsSkippedPods(t *testing.T) {
	o, out, _, _ := testOptions(t, []runtime.Object{
		wrappers.MakeNode("busy").Obj(),
		managedPod("web-0", "busy").Obj(), managedPod("web-1", "busy").Obj(),
		testPod("fluentd-x", "busy").DaemonSet().Obj(),
		testPod("etcd-busy", "busy").Mirror().Obj(),
	}, nil)
	d := &DrainOptions{Options: o, Nodes: []string{"busy"}, drainer: &drain.Helper{}}
	selections, err := d.prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.printSkipped("busy", selections["busy"])
	if got := len(selections["busy"].Evict); got != 2 {
		t.Errorf("%d pods to evict, want 2", got)
	}
	for _, want := range []string{
		"Warning: node busy: skipping DaemonSet-managed pods: shop/fluentd-x",
		"Warning: node busy: skipping mirror pods: shop/etcd-busy",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A pod whose interceptors, none answering, would hold it longer than
// --timeout is named in a warning with how long they may take; one whose
// interceptors fit in it is not.
func TestDrainWarnsOfInterceptorsThatOutlastTheTimeout(t *testing.T) {
	o, out, _, _ := testOptions(t, []runtime.Object{
		wrappers.MakeNode("busy").Obj(),
		managedPod("db-0", "busy").Interceptors("a.example.com", "b.example.com", "c.example.com").Obj(),
		managedPod("web-0", "busy").Interceptors("a.example.com").Obj(),
	}, nil)
	d := &DrainOptions{Options: o, Nodes: []string{"busy"}, Timeout: time.Hour, drainer: &drain.Helper{}}
	selections, err := d.prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.printSkipped("busy", selections["busy"])
	want := "Warning: node busy: pod shop/db-0 names 3 interceptors; if none answers, they hold it up to 1h30m0s, longer than --timeout=1h0m0s"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if strings.Contains(out.String(), "web-0") {
		t.Errorf("a pod whose one interceptor fits in the timeout is warned of:\n%s", out)
	}
}

// --dry-run=client prints the cordon and the requests and writes nothing;
// --dry-run=server sends them as server-side dry runs.
func TestDrainDryRun(t *testing.T) {
	for _, mode := range []string{"client", "server"} {
		t.Run(mode, func(t *testing.T) {
			o, out, kube, evr := testOptions(t, []runtime.Object{wrappers.MakeNode("busy").Obj(), managedPod("web-0", "busy").Obj()}, nil)
			d := &DrainOptions{Options: o, Nodes: []string{"busy"}, Cordon: true, DryRun: mode, drainer: &drain.Helper{}}
			if err := d.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			suffix := map[string]string{"client": " (dry run)", "server": " (server dry run)"}[mode]
			for _, want := range []string{"node/busy cordoned" + suffix, "pod/web-0 requested to leave (namespace shop) as " + DefaultRequesterName + suffix} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, a := range append(kube.Actions(), evr.Actions()...) {
				switch a.GetVerb() {
				case "patch", "create", "update", "delete":
					if a.GetResource().Resource == "selfsubjectaccessreviews" {
						continue
					}
					if mode == "client" {
						t.Errorf("a client dry run wrote %s %s", a.GetVerb(), a.GetResource().Resource)
						continue
					}
					if opts := dryRunOf(a); len(opts) == 0 {
						t.Errorf("a server dry run sent %s %s without dryRun", a.GetVerb(), a.GetResource().Resource)
					}
				}
			}
		})
	}
}

// dryRunOf is the dryRun option a patch action carried.
func dryRunOf(a clienttesting.Action) []string {
	if p, ok := a.(clienttesting.PatchActionImpl); ok {
		return p.PatchOptions.DryRun
	}
	return nil
}

// A drain interrupted while its caches sync exits without having changed
// anything (no cordon, no request), says so, and does not reach a
// withdrawal it has nothing for.
func TestDrainInterruptedWhileItsCachesSyncChangesNothing(t *testing.T) {
	o, out, kube, evr := testOptions(t, []runtime.Object{wrappers.MakeNode("busy").Obj(), managedPod("web-0", "busy").Obj()}, nil)
	d := newDrainOptions(o)
	d.Nodes, d.printer = []string{"busy"}, newPrinter("lines", out)
	interrupted, interrupt := context.WithCancel(t.Context())
	d.notifyInterrupt = func(context.Context) (context.Context, context.CancelFunc) { return interrupted, interrupt }
	// The requests' cache never syncs: Ctrl-C comes while the drain waits
	// for it.
	evr.PrependReactor("list", "evictionrequests", func(clienttesting.Action) (bool, runtime.Object, error) {
		interrupt()
		return true, nil, errors.New("the aggregated API is not available yet")
	})
	err := d.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "interrupted while watching the drain's pods and EvictionRequests; nothing was changed") {
		t.Errorf("Run() = %v, want the interruption and that nothing was changed\n%s", err, out)
	}
	if w := append(writes(kube), writes(evr)...); len(w) > 0 {
		t.Errorf("the interrupted drain wrote %v", w)
	}
}
