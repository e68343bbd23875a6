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

package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// laggingView is a drain's view of a node that has not caught up with a
// deletion: the pods as they were when it was taken, as a cache shows
// them for a moment after kube-apiserver restarted.
type laggingView struct {
	node string
	pods []*corev1.Pod
}

func (v laggingView) OnNode(node string) []*corev1.Pod {
	if node != v.node {
		return nil
	}
	return v.pods
}

// CheckADrainDoesNotAskAgainForAPodGone checks, on api, that a drain whose
// view of a node lags behind does not ask again for a pod kube-apiserver no
// longer has: the pod is deleted, the garbage collector removes its
// EvictionRequest with it, and the drain's next pass, which still sees the
// pod, reads it from kube-apiserver first and leaves it. Without that read
// it asked again, and a request was refused or made for a pod that was
// gone.
func (f *Framework) CheckADrainDoesNotAskAgainForAPodGone(t *testing.T, api evictionapi.API) {
	t.Helper()
	ctx := t.Context()
	pod := f.CreatePod(t, f.NewNamespace(t), "gone-0", PodOptions{})
	name := "live-read.e2e.example.com"
	if api == evictionapi.Lifecycle {
		name = "e2e.example.com/live-read"
	}
	p, err := participant.New(api, name, f.Kube, f.Clientset, requester.Options{CallTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	clock := testingclock.NewFakeClock(time.Now())
	var asked []error
	h := &drain.Helper{
		Participant: p, Pods: laggingView{node: pod.Spec.NodeName, pods: []*corev1.Pod{pod}}, Clock: clock,
		Policy:   drain.Policy{Force: true},
		LivePods: f.Kube.CoreV1(), CallTimeout: 10 * time.Second,
		OnRequested: func(_ *corev1.Pod, _ bool, err error) { asked = append(asked, err) },
	}
	session := h.NewSession(pod.Spec.NodeName)
	if _, err := session.Sync(ctx); err != nil || len(asked) != 1 {
		t.Fatalf("the first pass asked %d times (%v), want once: %v", len(asked), asked, err)
	}
	if s, err := p.Status(ctx, pod.Namespace, pod.UID); err != nil || !s.Exists {
		t.Fatalf("the pod's request after the first pass: %+v, %v", s, err)
	}

	if err := f.Kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, time.Minute, "the garbage collector to remove the request of the deleted pod", func(ctx context.Context) error {
		if s, err := p.Status(ctx, pod.Namespace, pod.UID); err != nil || s.Exists {
			return errors.Join(err, errors.New("the request is still there"))
		}
		return nil
	})

	clock.Step(time.Minute)
	asked = nil
	if _, err := session.Sync(ctx); err != nil || len(asked) != 0 {
		t.Errorf("the drain asked again for a pod kube-apiserver no longer has: %d calls (%v), Sync: %v", len(asked), asked, err)
	}
	if s, err := p.Status(ctx, pod.Namespace, pod.UID); err != nil || s.Exists {
		t.Errorf("the request of the gone pod after the second pass: %+v, %v", s, err)
	}
}
