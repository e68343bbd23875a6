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

package drain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

// A session limited to one node at a time drains its nodes in order: the
// next node's pods are requested only once the started node has none
// left, and the drain is not done while a node waits.
func TestSessionDrainsNodesInWaves(t *testing.T) {
	f := newSessionFixture()
	pods := map[string]*corev1.Pod{}
	for _, node := range []string{"node-a", "node-b", "node-c"} {
		pods[node] = wrappers.MakePod("web-" + node).Node(node).Obj()
		f.pods.set(node, pods[node])
	}
	f.session = f.helper.NewSession("node-a", "node-b", "node-c")
	f.session.SetMaxConcurrentNodes(2)

	report := f.sync(t)
	if diff := cmp.Diff([]string{"web-node-a", "web-node-b"}, f.requests.takeRequested()); diff != "" {
		t.Errorf("first wave requested (-want +got):\n%s", diff)
	}
	want := map[string]NodeState{"node-a": {Started: true, Left: 1}, "node-b": {Started: true, Left: 1}, "node-c": {}}
	if diff := cmp.Diff(want, report.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}

	// node-b's pod goes and its request is collected: node-c starts.
	f.requests.showWritten()
	f.pods.set("node-b")
	f.requests.collect(pods["node-b"].UID)
	report = f.sync(t)
	if report.Drained() {
		t.Fatal("drained while node-c had not started")
	}
	report = f.sync(t)
	if diff := cmp.Diff([]string{"web-node-c"}, f.requests.takeRequested()); diff != "" {
		t.Errorf("second wave requested (-want +got):\n%s", diff)
	}
	if !report.Nodes["node-c"].Started || !report.Nodes["node-b"].Done() || report.Nodes["node-a"].Done() {
		t.Errorf("nodes %+v", report.Nodes)
	}

	f.requests.showWritten()
	for _, node := range []string{"node-a", "node-c"} {
		f.pods.set(node)
		f.requests.collect(pods[node].UID)
	}
	if report := f.sync(t); !report.Drained() {
		t.Errorf("not drained once every node is empty: %+v", report.Nodes)
	}
}

// collect forgets the request of the pod with uid, as the garbage
// collector deletes it with its pod.
func (f *fakeRequests) collect(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.cache, uid)
	delete(f.written, uid)
}
