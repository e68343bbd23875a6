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

package plugin

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

func TestDrainRefusesBadInputAndChangesNothing(t *testing.T) {
	nodes := []runtime.Object{wrappers.MakeNode("empty").Obj(), wrappers.MakeNode("busy").Obj(), testPod("web-0", "busy").Obj()}
	for _, tc := range []struct {
		name  string
		nodes []string
		deny  []string
		want  []string
	}{
		{"a missing node", []string{"busy", "gone"}, nil, []string{`node "gone" not found`, "nothing was changed"}},
		{"a node with no pods", []string{"busy", "empty"}, nil, []string{"node empty has no pods", "nothing was changed"}},
		{"no permission to cordon", []string{"busy"}, []string{"patch nodes"}, []string{"you are not allowed to", "patch nodes (to cordon the nodes)", "nothing was changed"}},
		{"no permission to delete the pods", []string{"busy"}, []string{"delete pods"}, []string{"delete pods in namespace shop", "nothing was changed"}},
		{"no permission to write requests", []string{"busy"}, []string{"patch evictionrequests"}, []string{"patch evictionrequests.coordination.k8s.io in namespace shop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, kube, evr := testOptions(t, nodes, nil, tc.deny...)
			d := &DrainOptions{Options: o, Nodes: tc.nodes, Cordon: true}
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

func TestDrainSelectsAndReportsSkippedPods(t *testing.T) {
	o, out, _, _ := testOptions(t, []runtime.Object{
		wrappers.MakeNode("busy").Obj(),
		testPod("web-0", "busy").Obj(), testPod("web-1", "busy").Obj(),
		testPod("fluentd-x", "busy").DaemonSet().Obj(),
		testPod("etcd-busy", "busy").Mirror().Obj(),
	}, nil)
	d := &DrainOptions{Options: o, Nodes: []string{"busy"}}
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
