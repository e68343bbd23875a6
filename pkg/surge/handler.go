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

package surge

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
)

// startupEstimate is what a surge expects a new pod to take to be Ready
// before it can tell better: scheduling, pulling and starting.
const startupEstimate = 30 * time.Second

// maxScaleBacks is how many times the interceptor scales a Deployment back
// for one pod that its ReplicaSet keeps before the request is passed on.
const maxScaleBacks = 3

// Handle is the interceptor's Handler. Each call looks at the request's pod
// and its Deployment once, takes the one step of the surge that is due, and
// asks to be called again after PollInterval while the surge goes on: it
// joins the pod to a surge of its Deployment, waits for the replacements,
// scales back, and waits for the ReplicaSet to remove the pod, or passes
// the request on. All its state is on the Deployment and the pod, so that a
// restarted or new interceptor goes on where the last one stopped.
func (s *Surger) Handle(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
	ref, uid := req.Pod(), req.PodUID()
	pod, err := s.livePod(ctx, ref, uid)
	if err != nil {
		return interceptor.Result{}, err
	}
	if pod == nil {
		// The controller completes the request now that the pod is gone.
		return interceptor.Terminated("Pod %s is gone.", ref.Name), nil
	}
	rs, dep, err := s.ownersOf(pod)
	if err != nil {
		return interceptor.Result{}, err
	}
	if dep == nil {
		return s.passOn(nil, PassNoDeployment, fmt.Sprintf("Pod %s is not controlled by a Deployment (through a ReplicaSet); the surge interceptor passes it on.", pod.Name)), nil
	}
	state, err := currentState(dep)
	switch {
	case err != nil:
		return interceptor.Result{}, err
	case state == nil || state.Pods[uid] == "":
		return s.outsideSurge(ctx, req, pod, rs, dep, state)
	case state.Interceptor != s.cfg.Name:
		// Taken over from another interceptor: its surge is undone once it
		// no longer holds the request, and this one starts afresh then.
		return s.waitForSurgeOf(ctx, req, dep, state)
	case ptr.Deref(dep.Spec.Replicas, 1) != state.surged():
		// Someone set the replica count back (an apply of the Deployment's
		// manifest): the surge is applied again.
		if _, err := s.write(ctx, dep, state); err != nil {
			return interceptor.Result{}, err
		}
		return s.again(), nil
	}
	return s.replace(ctx, req, pod, dep, state)
}

// again asks to be called again after PollInterval.
func (s *Surger) again() interceptor.Result {
	return interceptor.Requeue(s.cfg.PollInterval)
}

// outsideSurge handles a pod that is in no surge of its Deployment: one
// being removed after a scale-back, or one to join to a surge.
func (s *Surger) outsideSurge(ctx context.Context, req *interceptor.Request, pod *corev1.Pod, rs *appsv1.ReplicaSet, dep *appsv1.Deployment, state *State) (interceptor.Result, error) {
	_, marked := pod.Annotations[OriginalDeletionCostAnnotation]
	switch {
	case podutil.IsTerminating(pod) && marked:
		return interceptor.Terminated("Deployment %s was scaled back; its ReplicaSet removes pod %s.", dep.Name, pod.Name), nil
	case podutil.IsTerminating(pod):
		// Its ReplicaSet replaces it already; a surge would add a second replacement.
		return interceptor.Terminated("Pod %s is being deleted already.", pod.Name), nil
	case marked:
		// The scale-back was written, by this interceptor or another, before
		// a restart or not: the pod goes once its ReplicaSet removes it.
		return s.awaitRemoval(ctx, req, pod, rs, dep)
	}
	return s.join(ctx, req, pod, rs, dep, state)
}

// replace waits until the surge of dep has the replacements of pod
// available, then marks pod for removal and scales dep back.
func (s *Surger) replace(ctx context.Context, req *interceptor.Request, pod *corev1.Pod, dep *appsv1.Deployment, state *State) (interceptor.Result, error) {
	pods, err := s.podsOf(dep)
	if err != nil {
		return interceptor.Result{}, err
	}
	now := s.cfg.Clock.Now()
	available, waiting, expected := replacements(pods, state.Pods, dep.Spec.MinReadySeconds, now)
	if need := state.need(); available < need {
		if expected == nil {
			expected = ptr.To(now.Add(startupEstimate + time.Duration(dep.Spec.MinReadySeconds)*time.Second))
		}
		message := fmt.Sprintf("Surging Deployment %s to replace pod %s: %d of the %d available pods it needs besides the %d being replaced",
			dep.Name, pod.Name, available, need, len(state.Pods))
		if len(waiting) > 0 {
			message += "; " + strings.Join(waiting, "; ")
		}
		return s.again(), req.Report(ctx, interceptor.Progress{Message: message + ".", ExpectedFinishTime: expected, CancellationPolicy: v1alpha1.Allow})
	}

	// The replacements are available. From here the pod's removal is in
	// flight and cannot be undone cleanly: cancellation is forbidden until
	// the pod is gone.
	if err := req.Report(ctx, interceptor.Progress{
		Message:            fmt.Sprintf("Replacements of pod %s are available; scaling Deployment %s back to %d.", pod.Name, dep.Name, state.OriginalReplicas),
		CancellationPolicy: v1alpha1.Forbid,
	}); err != nil {
		return interceptor.Result{}, err
	}
	if err := s.markForRemoval(ctx, pod); err != nil {
		return interceptor.Result{}, err
	}
	delete(state.Pods, pod.UID)
	updated, err := s.write(ctx, dep, state)
	if err != nil || updated == nil {
		// A conflict: the next call looks at the newer Deployment.
		return s.again(), err
	}
	s.cfg.Recorder.Eventf(dep, corev1.EventTypeNormal, EventSurgeScaledDown,
		"Replacements of pod %s are available: scaled back to %d replicas; the ReplicaSet removes pod %s first (lowest pod-deletion-cost).", pod.Name, *updated.Spec.Replicas, pod.Name)
	klog.FromContext(ctx).V(2).Info("Scaled the Deployment back", "deployment", klog.KObj(dep), "replicas", *updated.Spec.Replicas)
	// The request ends when the pod is being deleted, not now: the
	// ReplicaSet may keep it (awaitRemoval).
	return s.again(), nil
}

// waitForSurgeOf reports that the request waits for the surge of another
// interceptor on dep to end: two surges of one Deployment would each count
// the other's replacements as their own.
func (s *Surger) waitForSurgeOf(ctx context.Context, req *interceptor.Request, dep *appsv1.Deployment, state *State) (interceptor.Result, error) {
	return s.again(), req.Report(ctx, interceptor.Progress{Message: fmt.Sprintf(
		"Waiting for the surge of Deployment %s by interceptor %q to end.", dep.Name, state.Interceptor),
		CancellationPolicy: v1alpha1.Allow})
}

// passOn counts and reports a request the interceptor cannot help with.
func (s *Surger) passOn(dep *appsv1.Deployment, reason PassReason, message string) interceptor.Result {
	metrics.PassedOn.WithLabelValues(string(reason)).Inc()
	if dep != nil {
		s.cfg.Recorder.Eventf(dep, corev1.EventTypeNormal, EventSurgePassedOn, "%s", message)
	}
	return interceptor.Decline("%s", message)
}
