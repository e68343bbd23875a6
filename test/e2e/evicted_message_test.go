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
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

const (
	// evictedMessage is what a request says of a pod evicted through the
	// Eviction API while it terminates; terminatingMessage of a pod whose
	// deletion it did not see start from an eviction.
	evictedMessage     = "was evicted through the Eviction API; waiting for it to terminate."
	terminatingMessage = "is terminating; waiting for it to be gone."
)

// slowPod runs on node, the real kubelet's, with a grace period of 60 s,
// and takes 20 s to stop once told to.
func slowPod(t *testing.T, ns string, node *localcluster.KubeletNode) *corev1.Pod {
	t.Helper()
	return f.CreatePod(t, ns, "slow-0", framework.PodOptions{Node: node.Name, Mutate: func(pod *corev1.Pod) {
		framework.OnKubeletNode(pod)
		pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](60)
		pod.Annotations = map[string]string{localcluster.ExitDelayAnnotation: "20s"}
	}})
}

// message is a status.message of a request and when the test saw it.
type message struct {
	text string
	at   time.Time
}

// messagesUntilGone polls the request of pod every 100 ms until it
// completes (the pod gone or terminal) and returns every message it
// showed, in order; a read that fails (the server restarting) is skipped.
func messagesUntilGone(t *testing.T, pod *corev1.Pod) []message {
	t.Helper()
	var seen []message
	framework.Eventually(t, 2*time.Minute, "the request of "+pod.Name+" to complete", func(ctx context.Context) error {
		er, err := f.EvictionRequests(pod.Namespace).Get(ctx, string(pod.UID), metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && (len(seen) == 0 || seen[len(seen)-1].text != er.Status.Message) {
			seen = append(seen, message{text: er.Status.Message, at: time.Now()})
		}
		if err != nil || coordinationutil.IsComplete(er) {
			return nil
		}
		return errors.New("not complete yet")
	})
	return seen
}

// A pod of the real kubelet with a 60 s grace period that takes 20 s to
// stop, evicted through its request: within 3 s of its deletion the
// request says it was evicted and is terminating (timed on the
// controller's clock, not from the pod's grace period, which the server's
// pod cache does not keep), and says nothing else until the pod is gone.
func TestTheRequestOfAnEvictedPodSaysItTerminates(t *testing.T) {
	t.Parallel()
	ns := f.NewNamespace(t)
	pod := slowPod(t, ns, f.NewKubeletNode(t))
	f.CreateEvictionRequest(t, pod, "e2e.example.com")
	deleting := f.WaitForPod(t, ns, pod.Name, "its eviction", func(p *corev1.Pod) error {
		if p.DeletionTimestamp == nil {
			return errors.New("not deleted yet")
		}
		return nil
	})
	deleted := time.Now()
	seen := messagesUntilGone(t, deleting)
	for i, m := range seen {
		switch {
		case strings.Contains(m.text, evictedMessage):
			if after := m.at.Sub(deleted); after > 3*time.Second {
				t.Errorf("the request said the pod terminates %s after its deletion, want within 3s", after)
			}
			if i+2 < len(seen) {
				t.Errorf("after the evicted message the request said more than its completion: %+v", seen[i+1:])
			}
			return
		case strings.Contains(m.text, terminatingMessage):
			t.Errorf("the request said %q of a pod its controller evicted", m.text)
		}
	}
	t.Errorf("the request never said the pod was evicted and terminates: %+v", seen)
}

// The same across a restart of the server between the pod's eviction and
// its end: the new process, which did not grant the eviction, reads from
// the pod that the Eviction API evicted it, and says so, never that it
// merely terminates.
func TestTheRequestOfAnEvictedPodSaysItTerminatesAcrossARestart(t *testing.T) {
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := slowPod(t, ns, f.NewKubeletNode(t))
	f.CreateEvictionRequest(t, pod, "e2e.example.com")
	deleting := f.WaitForPod(t, ns, pod.Name, "its eviction", func(p *corev1.Pod) error {
		if p.DeletionTimestamp == nil {
			return errors.New("not deleted yet")
		}
		return nil
	})
	if err := f.RestartServers(ctx, f.EvictionServer()); err != nil {
		t.Fatalf("restarting evictionrequest-apiserver: %v", err)
	}
	restarted := time.Now()
	seen := messagesUntilGone(t, deleting)
	said := false
	for _, m := range seen {
		if strings.Contains(m.text, terminatingMessage) {
			t.Errorf("after the restart the request said %q of a pod the Eviction API evicted", m.text)
		}
		if strings.Contains(m.text, evictedMessage) {
			said = true
			if m.at.After(restarted) && m.at.Sub(restarted) > 3*time.Second {
				t.Errorf("the request said the pod terminates %s after the server was ready again, want within 3s", m.at.Sub(restarted))
			}
		}
	}
	if !said {
		t.Errorf("the request never said the pod was evicted and terminates: %+v", seen)
	}
}
