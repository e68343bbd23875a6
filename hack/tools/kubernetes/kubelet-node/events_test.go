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

package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	inuserns "github.com/moby/sys/userns"
	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet"
	oomwatcher "k8s.io/kubernetes/pkg/kubelet/oom"
)

// inUserNamespaceEnv tells the test binary it runs in the user namespace
// the test made: it runs the test's body.
const inUserNamespaceEnv = "KUBELET_NODE_TEST_IN_USER_NAMESPACE"

// runInUserNamespace runs the test named name again in a child process in
// a user namespace of its own, as node-host runs the kubelet
// (hack/node-host: the same identity mapping), and reports its failure.
func runInUserNamespace(t *testing.T, name string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), inUserNamespaceEnv+"=1")
	uid, gid := os.Getuid(), os.Getgid()
	size := 1
	if uid == 0 {
		// Every id but the last: the full range would be the host's own
		// namespace to the kubelet.
		size = 1<<32 - 2
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: size}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: size}}}
	out, err := cmd.CombinedOutput()
	t.Logf("in a user namespace:\n%s", out)
	if err != nil {
		t.Fatalf("in a user namespace: %v", err)
	}
}

// The kubelet posts its events (Shutdown, NodeNotReady, Killing...) to
// kube-apiserver whether it can read /dev/kmsg or not: in the user
// namespace node-host runs it in, the kubelet starts with the recorder
// it makes itself, without its out-of-memory watcher when /dev/kmsg
// cannot be read (KubeletInUserNamespace). Here, with dmesg_restrict on,
// the user namespace cannot read it.
func TestTheKubeletRecordsEventsWithoutKmsg(t *testing.T) {
	if os.Getenv(inUserNamespaceEnv) == "" {
		runInUserNamespace(t, t.Name())
		return
	}
	if f, err := os.Open("/dev/kmsg"); err != nil {
		t.Logf("/dev/kmsg cannot be read: %v", err)
	} else {
		f.Close()
		t.Log("/dev/kmsg can be read")
	}
	// As kubemark's NewHollowKubelet leaves them: a recorder that drops
	// every event.
	deps := &kubelet.Dependencies{Recorder: &record.FakeRecorder{}}
	recordEvents(deps, clientset.NewForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:1"}))
	if deps.Recorder != nil || deps.EventClient == nil {
		t.Fatalf("Recorder %T, EventClient %v: the kubelet's events are dropped", deps.Recorder, deps.EventClient)
	}
	// The kubelet then makes its recorder (cmd/kubelet/app makeEventRecorder)
	// and its out-of-memory watcher with it, which opens /dev/kmsg; an error
	// stops the kubelet unless it runs in a user namespace with
	// KubeletInUserNamespace (pkg/kubelet NewMainKubelet).
	recorder := record.NewBroadcaster().NewRecorder(legacyscheme.Scheme, v1.EventSource{Component: "kubelet", Host: "node-0"})
	if _, err := oomwatcher.NewWatcher(recorder); err != nil {
		if !inuserns.RunningInUserNS() || !utilfeature.DefaultFeatureGate.Enabled(features.KubeletInUserNamespace) {
			t.Fatalf("the kubelet would not start: its out-of-memory watcher: %v", err)
		}
		t.Logf("the kubelet starts without its out-of-memory watcher: %v", err)
	}
}
