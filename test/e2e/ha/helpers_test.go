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
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// flowTimeout bounds how long a test waits for a flow to go on after a
// disruption: a takeover (a Lease of 15 s) plus the controller's backoff.
const flowTimeout = 2 * time.Minute

// holdInterceptor is an interceptor written with the Go SDK that the test
// runs, reaching the API through the aggregator as any interceptor does: it
// holds every request of its namespace, heartbeating every second, until
// the test releases them, then completes them.
type holdInterceptor struct {
	name    string
	release chan struct{}

	mu   sync.Mutex
	held map[string]bool
}

func startHoldInterceptor(t *testing.T, ns, name string) *holdInterceptor {
	t.Helper()
	h := &holdInterceptor{name: name, release: make(chan struct{}), held: map[string]bool{}}
	f.StartInterceptor(t, ns, name, h.handle)
	return h
}

func (h *holdInterceptor) handle(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
	h.mu.Lock()
	h.held[req.EvictionRequest.Name] = true
	h.mu.Unlock()
	select {
	case <-h.release:
		return interceptor.Complete("released by the test"), nil
	case <-ctx.Done():
		return interceptor.Result{}, ctx.Err()
	}
}

// waitHolding waits until the interceptor has been handed n requests.
func (h *holdInterceptor) waitHolding(t *testing.T, n int) {
	t.Helper()
	framework.Eventually(t, flowTimeout, fmt.Sprintf("%s to hold %d requests", h.name, n), func(context.Context) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.held) != n {
			return fmt.Errorf("holds %d", len(h.held))
		}
		return nil
	})
}

// releaseAll lets every Handler complete, now and later.
func (h *holdInterceptor) releaseAll() {
	close(h.release)
}

// waitListed waits until a LIST through the aggregator returns the n
// requests of ns: the API is served.
func waitListed(t *testing.T, ns string, n int) {
	t.Helper()
	framework.WaitFor(t, "the requests to be listed through the aggregator", func(ctx context.Context) (*v1alpha1.EvictionRequestList, error) {
		return f.EvictionRequests(ns).List(ctx, metav1.ListOptions{})
	}, func(list *v1alpha1.EvictionRequestList) error {
		if len(list.Items) != n {
			return fmt.Errorf("%d requests", len(list.Items))
		}
		return nil
	})
}

// restartIfDown starts a process the test killed again when the test ends,
// unless the test did already: the next test needs the whole cluster. p is
// the server or etcd member, whose current process a restart replaces.
func restartIfDown(t *testing.T, name string, p interface{ Done() <-chan struct{} }, restart func(context.Context) error) {
	t.Cleanup(func() {
		select {
		case <-p.Done():
		default:
			return
		}
		if err := restart(context.Background()); err != nil {
			t.Errorf("starting %s again: %v", name, err)
		}
	})
}

// createPods creates n running pods named prefix-0, prefix-1, ... on node
// that list interceptor.
func createPods(t *testing.T, ns, node, prefix, interceptor string, n int) []*corev1.Pod {
	t.Helper()
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = f.CreatePod(t, ns, fmt.Sprintf("%s-%d", prefix, i), framework.PodOptions{Node: node, Interceptors: []string{interceptor}})
	}
	return pods
}

// waitEvictedOnce waits until every pod is gone and checks in
// kube-apiserver's audit log that each was evicted exactly once.
func waitEvictedOnce(t *testing.T, pods []*corev1.Pod) {
	t.Helper()
	for _, pod := range pods {
		f.WaitForPodGone(t, pod.Namespace, pod.Name)
	}
	for _, pod := range pods {
		if attempts, granted := f.AuditedEvictions(t, pod.Namespace, pod.Name); granted != 1 {
			t.Errorf("kube-apiserver granted %d evictions of %s (%d attempts), want exactly one", granted, pod.Name, attempts)
		}
	}
}

// waitComplete waits until the requests of pods are complete.
func waitComplete(t *testing.T, pods []*corev1.Pod) {
	t.Helper()
	for _, pod := range pods {
		f.WaitForCompletion(t, pod.Namespace, string(pod.UID))
	}
}

// activeInterceptorSample is the gauge only the leading replica reports.
func activeInterceptorSample(interceptor string) string {
	return fmt.Sprintf(`evictionrequest_controller_active_interceptor{interceptor=%q}`, interceptor)
}

// leaderReplica finds the running replica whose controller counts want
// requests in the hands of interceptor, and checks that the other running
// replicas do not act: only the leader reports the gauge.
func leaderReplica(t *testing.T, interceptor string, want int) (leader *localcluster.Server, standbys []*localcluster.Server) {
	t.Helper()
	sample := activeInterceptorSample(interceptor)
	framework.Eventually(t, flowTimeout, "one replica to lead with "+sample, func(context.Context) error {
		leader, standbys = nil, nil
		for _, r := range f.Replicas() {
			select {
			case <-r.Done():
				continue // killed by the test
			default:
			}
			v, ok := framework.ScrapeMetrics(t, f.ServerClientConfig(r)).Value(sample)
			switch {
			case ok && int(v) == want && leader == nil:
				leader = r
			case ok:
				return fmt.Errorf("%s reports %s %v", r.Name, sample, v)
			default:
				standbys = append(standbys, r)
			}
		}
		if leader == nil {
			return fmt.Errorf("no replica reports %s %d", sample, want)
		}
		return nil
	})
	return leader, standbys
}
