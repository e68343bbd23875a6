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

package ha

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// controllerLease is the Lease the replicas of the ha overlay elect their
// controller leader on; lifecycleLease that of evictionrequest-controller,
// which runs beside them.
const (
	controllerLease = "evictionrequest-apiserver"
	lifecycleLease  = "evictionrequest-controller"
)

// TestLeaderReplicaKilledMidFlow kills the replica that leads while an
// interceptor holds ten requests: the API stays served through the other
// replica, which takes the Lease over within 20 s (the ha overlay's 10 s
// Lease, at most 15 s by design) and finishes every flow; kube-apiserver's audit log shows each
// pod evicted once.
func TestLeaderReplicaKilledMidFlow(t *testing.T) {
	const pods, holder = 10, "hold-leader.e2e.example.com"
	ctx := t.Context()
	ns := f.NewNamespace(t)
	held := createPods(t, ns, f.NodeNames[0], "web", holder, pods)
	for _, pod := range held {
		f.CreateEvictionRequest(t, pod, "nodemaintenance.k8s.io")
	}
	hold := startHoldInterceptor(t, ns, holder)
	hold.waitHolding(t, pods)

	leader, standbys := leaderReplica(t, holder, pods)
	if len(standbys) != 1 {
		t.Fatalf("%d standby replicas, want the ha overlay's one", len(standbys))
	}
	// Each replica serves the leader election check on /healthz.
	for _, r := range f.Replicas() {
		client, err := kubernetes.NewForConfig(f.ServerClientConfig(r))
		if err != nil {
			t.Fatal(err)
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/healthz").Param("verbose", "true").DoRaw(ctx)
		if err != nil || !strings.Contains(string(body), "[+]leaderElection ok") {
			t.Errorf("%s /healthz lacks a passing leaderElection check: %v\n%s", r.Name, err, body)
		}
	}

	// The leader crashes without giving the Lease up; the standby takes it
	// once it expires.
	leases := f.Kube.CoordinationV1().Leases("evictionrequest-system")
	lease, err := leases.Get(ctx, controllerLease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crashed := ptr.Deref(lease.Spec.HolderIdentity, "")
	killedAt := time.Now()
	leader.Kill()
	restartIfDown(t, leader.Name, leader, func(ctx context.Context) error { return f.RestartServers(ctx, leader) })
	// The API stays served: the aggregator's next connection goes to the
	// standby.
	waitListed(t, ns, pods)
	t.Logf("the requests were listed through the aggregator %s after the leader was killed", time.Since(killedAt).Round(100*time.Millisecond))
	framework.Eventually(t, time.Minute, "the standby to take the Lease over", func(ctx context.Context) error {
		lease, err := leases.Get(ctx, controllerLease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder == crashed || holder == "" {
			return fmt.Errorf("still held by %q", holder)
		}
		return nil
	})
	takeover := time.Since(killedAt)
	t.Logf("the standby took the Lease over %s after the leader was killed", takeover.Round(100*time.Millisecond))
	if takeover > 20*time.Second {
		t.Errorf("the takeover took %s, more than 20 s", takeover)
	}
	if newLeader, _ := leaderReplica(t, holder, pods); newLeader != standbys[0] {
		t.Errorf("%s leads, want the standby %s", newLeader.Name, standbys[0].Name)
	}

	hold.releaseAll()
	waitEvictedOnce(t, held)
	waitComplete(t, held)

	if err := f.RestartServers(ctx, leader); err != nil {
		t.Fatalf("starting %s again: %v", leader.Name, err)
	}
}

// TestBothReplicasRestartedResumeTheFlow restarts both replicas at once
// while a request is in the hands of its first interceptor: the request
// comes back as it was, and the new leader goes on with the flow, handing it
// to the next interceptor once the first one completes.
func TestBothReplicasRestartedResumeTheFlow(t *testing.T) {
	ctx := t.Context()
	ns := f.NewNamespace(t)
	const first, next = "first.e2e.example.com", "next.e2e.example.com"
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{Interceptors: []string{next, first}})
	name := f.CreateEvictionRequest(t, pod, "nodemaintenance.k8s.io").Name
	requests := f.EvictionRequests(ns)
	waitActive := func(interceptor string) {
		t.Helper()
		framework.Eventually(t, flowTimeout, interceptor+" to be the active interceptor", func(ctx context.Context) error {
			current, err := requests.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := ptr.Deref(current.Status.ActiveInterceptorName, ""); got != interceptor {
				return fmt.Errorf("active interceptor %q", got)
			}
			return nil
		})
	}
	// The first interceptor reports progress, as it would while it works.
	report := func(mutate func(*v1alpha1.EvictionRequestStatus)) *v1alpha1.EvictionRequest {
		t.Helper()
		var written *v1alpha1.EvictionRequest
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			er, err := requests.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(time.Now().Truncate(time.Second)))
			mutate(&er.Status)
			written, err = requests.UpdateStatus(ctx, er, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("reporting as %s: %v", first, err)
		}
		return written
	}
	waitActive(first)
	before := report(func(s *v1alpha1.EvictionRequestStatus) { s.Message = "checkpointing, 40%" })

	if err := f.RestartServers(ctx, f.Replicas()...); err != nil {
		t.Fatal(err)
	}

	after, err := requests.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion || ptr.Deref(after.Status.ActiveInterceptorName, "") != first || after.Status.Message != before.Status.Message {
		t.Errorf("the restart changed the request: active %v, message %q, resourceVersion %s (was %s)",
			after.Status.ActiveInterceptorName, after.Status.Message, after.ResourceVersion, before.ResourceVersion)
	}

	// The first interceptor is done: the new leader hands the request on.
	report(func(s *v1alpha1.EvictionRequestStatus) {
		s.ActiveInterceptorCompleted = true
		s.Message = "checkpoint written"
	})
	waitActive(next)
}
