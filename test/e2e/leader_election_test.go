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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
	"github.com/evictionrequest/apiserver/test/localcluster"
)

// replica is an evictionrequest-apiserver reached directly, not through the
// aggregator, which points at the suite's own server.
type replica struct {
	name   string
	server *localcluster.Server
	config *rest.Config
	client versioned.Interface
}

func startReplica(t *testing.T, name string, args []string) *replica {
	t.Helper()
	server, err := f.StartServer(framework.Context(t), localcluster.ServerOptions{Name: name, Args: args})
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(server.Stop)
	r := &replica{name: name, server: server, config: f.ServerClientConfig(server)}
	if r.client, err = versioned.NewForConfig(r.config); err != nil {
		t.Fatal(err)
	}
	return r
}

// metric reads one sample of the replica's /metrics, 0 when absent.
func (r *replica) metric(t *testing.T, sample string) float64 {
	t.Helper()
	v, _ := scrapeMetrics(t, r.config).value(sample)
	return v
}

// replicasLease is the Lease of the replicas of the leader election test.
const replicasLease = "evictionrequest-controller-e2e-replicas"

// TestLeaderElectionHandsOverAndNeverEvictsTwice runs two replicas on one
// etcd: only the leader evicts; killing it hands the controller to the
// other, and kube-apiserver's audit log shows every pod evicted once.
func TestLeaderElectionHandsOverAndNeverEvictsTwice(t *testing.T) {
	t.Parallel()
	ctx := framework.Context(t)
	ns := f.NewNamespace(t)

	etcdURL, etcd, err := f.StartEtcd(ctx, "replicas-etcd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--leader-elect-resource-name=" + replicasLease,
		"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s",
	}
	replicas := []*replica{startReplica(t, "replica-a", args), startReplica(t, "replica-b", args)}

	evict := func(via *replica, podName string) {
		t.Helper()
		pod := f.CreatePod(t, ns, podName, framework.PodOptions{})
		nodeDrain, err := requester.New("nodemaintenance.k8s.io", via.client, f.Kube.CoreV1(), requester.Options{KeepAfterPod: true})
		if err != nil {
			t.Fatal(err)
		}
		er, err := nodeDrain.Request(ctx, pod)
		if err != nil {
			t.Fatalf("requesting the eviction of %s through %s: %v", podName, via.name, err)
		}
		waitForPodGone(t, ns, podName)
		framework.Eventually(t, controllerTimeout, "the request of "+podName+" to complete", func(ctx context.Context) error {
			current, err := via.client.CoordinationV1alpha1().EvictionRequests(ns).Get(ctx, er.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !apimeta.IsStatusConditionTrue(current.Status.Conditions, string(v1alpha1.EvictionRequestComplete)) {
				return fmt.Errorf("not complete: %s", current.Status.Message)
			}
			return nil
		})
	}
	const evicted = `evictionrequest_controller_evictions{result="success"}`

	evict(replicas[0], "first-0")
	var leader, standby *replica
	for i, r := range replicas {
		if r.metric(t, evicted) > 0 {
			leader, standby = r, replicas[1-i]
		}
	}
	if leader == nil {
		t.Fatalf("no replica reports the eviction of first-0")
	}
	if got := standby.metric(t, evicted); got != 0 {
		t.Errorf("the standby %s evicted %v pods while %s led", standby.name, got, leader.name)
	}
	// Each replica serves the leader election check on /healthz.
	for _, r := range replicas {
		client, err := kubernetes.NewForConfig(r.config)
		if err != nil {
			t.Fatal(err)
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/healthz").Param("verbose", "true").DoRaw(ctx)
		if err != nil || !strings.Contains(string(body), "[+]leaderElection ok") {
			t.Errorf("%s /healthz lacks a passing leaderElection check: %v\n%s", r.name, err, body)
		}
	}

	// The leader crashes without releasing its Lease; the standby takes over
	// once the Lease expires: 6 s here, and the bound is 20 s.
	leases := f.Kube.CoordinationV1().Leases("evictionrequest-system")
	lease, err := leases.Get(ctx, replicasLease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crashed := ptr.Deref(lease.Spec.HolderIdentity, "")
	killedAt := time.Now()
	leader.server.Kill()
	framework.Eventually(t, time.Minute, "the standby to take the Lease over", func(ctx context.Context) error {
		lease, err := leases.Get(ctx, replicasLease, metav1.GetOptions{})
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
	evict(standby, "second-0")
	if got := standby.metric(t, evicted); got != 1 {
		t.Errorf("the new leader %s reports %v evictions, want the one of second-0", standby.name, got)
	}

	for _, pod := range []string{"first-0", "second-0"} {
		if attempts, granted := f.AuditedEvictions(t, ns, pod); attempts != 1 || granted != 1 {
			t.Errorf("kube-apiserver received %d evictions of %s (%d granted), want exactly one", attempts, pod, granted)
		}
	}
}

// TestBothReplicasRestartedResumeTheFlow restarts both replicas at once
// while a request is in the hands of its first interceptor: the request
// comes back as it was, and the new leader goes on with the flow, handing it
// to the next interceptor once the first one completes.
func TestBothReplicasRestartedResumeTheFlow(t *testing.T) {
	t.Parallel()
	ctx := framework.Context(t)
	ns := f.NewNamespace(t)
	etcdURL, etcd, err := f.StartEtcd(ctx, "restart-etcd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--leader-elect-resource-name=evictionrequest-controller-e2e-restart",
		"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s",
	}
	a, b := startReplica(t, "restart-a", args), startReplica(t, "restart-b", args)

	const first, next = "first.e2e.example.com", "next.e2e.example.com"
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{Interceptors: []string{next, first}})
	if _, err := a.client.CoordinationV1alpha1().EvictionRequests(ns).Create(ctx, framework.NewEvictionRequest(pod, "nodemaintenance.k8s.io"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := string(pod.UID)
	waitActive := func(r *replica, interceptor string) *v1alpha1.EvictionRequest {
		t.Helper()
		var er *v1alpha1.EvictionRequest
		framework.Eventually(t, controllerTimeout, interceptor+" to be the active interceptor", func(ctx context.Context) error {
			current, err := r.client.CoordinationV1alpha1().EvictionRequests(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := ptr.Deref(current.Status.ActiveInterceptorName, ""); got != interceptor {
				return fmt.Errorf("active interceptor %q", got)
			}
			er = current
			return nil
		})
		return er
	}
	// The first interceptor reports progress, as it would while it works.
	report := func(r *replica, mutate func(*v1alpha1.EvictionRequestStatus)) *v1alpha1.EvictionRequest {
		t.Helper()
		var written *v1alpha1.EvictionRequest
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			er, err := r.client.CoordinationV1alpha1().EvictionRequests(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			er.Status.HeartbeatTime = ptr.To(metav1.NewTime(time.Now().Truncate(time.Second)))
			mutate(&er.Status)
			written, err = r.client.CoordinationV1alpha1().EvictionRequests(ns).UpdateStatus(ctx, er, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("reporting as %s: %v", first, err)
		}
		return written
	}
	waitActive(a, first)
	before := report(a, func(s *v1alpha1.EvictionRequestStatus) { s.Message = "checkpointing, 40%" })

	a.server.Stop()
	b.server.Stop()
	a, b = startReplica(t, "restart-a2", args), startReplica(t, "restart-b2", args)

	after, err := b.client.CoordinationV1alpha1().EvictionRequests(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion || ptr.Deref(after.Status.ActiveInterceptorName, "") != first || after.Status.Message != before.Status.Message {
		t.Errorf("the restart changed the request: active %v, message %q, resourceVersion %s (was %s)",
			after.Status.ActiveInterceptorName, after.Status.Message, after.ResourceVersion, before.ResourceVersion)
	}

	// The first interceptor is done: the new leader hands the request on.
	report(b, func(s *v1alpha1.EvictionRequestStatus) {
		s.ActiveInterceptorCompleted = true
		s.Message = "checkpoint written"
	})
	waitActive(a, next)
}
