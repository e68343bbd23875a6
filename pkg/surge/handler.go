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
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
)

// startupEstimate is what a surge expects a new pod to take to be Ready
// before it can tell better: scheduling, pulling and starting.
const startupEstimate = 30 * time.Second

// maxScaleBacks is how many times a run scales a Deployment back for one
// pod that its ReplicaSet keeps before the request is passed on.
const maxScaleBacks = 3

// Handle is the interceptor's Handler: it replaces the request's pod by a
// surge of its Deployment, or passes the request on. It keeps all its state
// on the Deployment and the pod, so that it resumes wherever it stopped.
// After each write it waits a poll interval, so that its cache catches up
// rather than a stale copy being written again.
func (s *Surger) Handle(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
	ref, uid := req.Pod(), req.PodUID()
	logger := klog.FromContext(ctx)
	reporter := &reporter{req: req}
	// scaledBack is set once this run wrote the scale-back: the cached pod
	// may not show its mark yet.
	scaledBack := false
	scaleBacks := 0
	for first := true; ; first = false {
		if !first && !sleep(ctx, s.cfg.PollInterval) {
			return interceptor.Result{}, ctx.Err()
		}
		pod, err := s.livePod(ctx, ref, uid)
		if err != nil {
			return interceptor.Result{}, err
		}
		if pod == nil {
			// The controller completes the request now that the pod is gone;
			// after this run's scale-back, its ReplicaSet removed it.
			if scaledBack {
				metrics.Completed.Inc()
			}
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
		if err != nil {
			return interceptor.Result{}, err
		}
		if state == nil || state.Pods[uid] == "" {
			_, marked := pod.Annotations[OriginalDeletionCostAnnotation]
			marked = marked || scaledBack
			switch {
			case pod.DeletionTimestamp != nil && marked:
				metrics.Completed.Inc()
				return interceptor.Terminated("Deployment %s was scaled back; its ReplicaSet removes pod %s.", dep.Name, pod.Name), nil
			case pod.DeletionTimestamp != nil:
				// Its ReplicaSet replaces it already; a surge would add a second replacement.
				return interceptor.Terminated("Pod %s is being deleted already.", pod.Name), nil
			case marked:
				// The scale-back was written, by this run or before a
				// restart: the pod goes once its ReplicaSet removes it.
				kept, result, err := s.awaitRemoval(ctx, reporter, pod, rs, dep, scaleBacks)
				if err != nil || result != nil {
					return ptrOr(result), err
				}
				if !kept {
					continue
				}
				scaledBack = false
			}
			result, err := s.join(ctx, reporter, pod, rs, dep, state)
			if err != nil || result != nil {
				return ptrOr(result), err
			}
			continue
		}
		if state.Interceptor != s.cfg.Name {
			// Taken over from another interceptor: its surge is undone
			// once it no longer holds the request, and this one starts
			// afresh then.
			if err := s.waitForSurgeOf(ctx, reporter, dep, state); err != nil {
				return interceptor.Result{}, err
			}
			continue
		}
		if surged := state.OriginalReplicas + int32(len(state.Pods)); *dep.Spec.Replicas != surged {
			// Someone set the replica count back (an apply of the
			// Deployment's manifest): the surge is applied again.
			if _, err := s.write(ctx, dep, state); err != nil {
				return interceptor.Result{}, err
			}
			continue
		}

		pods, err := s.podsOf(dep)
		if err != nil {
			return interceptor.Result{}, err
		}
		now := s.cfg.Clock.Now()
		available, waiting, expected := replacements(pods, state.Pods, dep.Spec.MinReadySeconds, now)
		if need := state.need(); available < need {
			if expected == nil {
				// Until a replacement is Ready, an estimate made once.
				if reporter.estimate == nil {
					reporter.estimate = ptr.To(now.Add(startupEstimate + time.Duration(dep.Spec.MinReadySeconds)*time.Second))
				}
				expected = reporter.estimate
			}
			message := fmt.Sprintf("Surging Deployment %s to replace pod %s: %d of the %d available pods it needs besides the %d being replaced",
				dep.Name, pod.Name, available, need, len(state.Pods))
			if len(waiting) > 0 {
				message += "; " + strings.Join(waiting, "; ")
			}
			if err := reporter.report(ctx, interceptor.Progress{Message: message + ".", ExpectedFinishTime: expected, CancellationPolicy: v1alpha1.Allow}); err != nil {
				return interceptor.Result{}, err
			}
			continue
		}

		// The replacements are available. From here the pod's removal is
		// in flight and cannot be undone cleanly: cancellation is forbidden
		// until the pod is gone.
		if err := reporter.report(ctx, interceptor.Progress{
			Message:            fmt.Sprintf("Replacements of pod %s are available; scaling Deployment %s back to %d.", pod.Name, dep.Name, state.OriginalReplicas),
			CancellationPolicy: v1alpha1.Forbid,
		}); err != nil {
			return interceptor.Result{}, err
		}
		if err := s.markForRemoval(ctx, pod); err != nil {
			return interceptor.Result{}, err
		}
		delete(state.Pods, uid)
		updated, err := s.write(ctx, dep, state)
		if err != nil {
			return interceptor.Result{}, err
		}
		if updated == nil {
			logger.V(4).Info("Deployment changed while scaling it back, retrying", "deployment", klog.KObj(dep))
			continue
		}
		s.cfg.Recorder.Eventf(dep, corev1.EventTypeNormal, EventSurgeScaledDown,
			"Replacements of pod %s are available: scaled back to %d replicas; the ReplicaSet removes pod %s first (lowest pod-deletion-cost).", pod.Name, *updated.Spec.Replicas, pod.Name)
		logger.V(2).Info("Scaled the Deployment back", "deployment", klog.KObj(dep), "replicas", *updated.Spec.Replicas)
		// The request ends when the pod is being deleted, not now: the
		// ReplicaSet may keep it (see keptAfterScaleBack).
		scaledBack = true
		scaleBacks++
	}
}

// awaitRemoval looks once, of the handler's polls, whether the ReplicaSet of
// dep removed pod after a scale-back. It returns kept when the ReplicaSet removed
// another pod, most likely the replacement: the pod's deletion cost is then
// restored and the caller surges again rather than leave the request waiting
// for a removal that never comes. After scaleBacks reaches maxScaleBacks it
// returns the result that passes the request on instead.
func (s *Surger) awaitRemoval(ctx context.Context, reporter *reporter, pod *corev1.Pod, rs *appsv1.ReplicaSet, dep *appsv1.Deployment, scaleBacks int) (kept bool, result *interceptor.Result, err error) {
	live, err := s.keptAfterScaleBack(ctx, pod, rs, dep)
	if err != nil {
		return false, nil, err
	}
	if live == nil {
		return false, nil, reporter.report(ctx, interceptor.Progress{
			Message:            fmt.Sprintf("Deployment %s was scaled back to %d; waiting for ReplicaSet %s to remove pod %s.", dep.Name, ptr.Deref(dep.Spec.Replicas, 1), rs.Name, pod.Name),
			CancellationPolicy: v1alpha1.Forbid,
		})
	}
	// A pod without the mark on the server was restored by an earlier
	// round whose writes the cache does not show yet.
	_, stillMarked := live.Annotations[OriginalDeletionCostAnnotation]
	if err := s.restoreDeletionCost(ctx, live); err != nil {
		return false, nil, err
	}
	// No removal is in flight any more: the request may be canceled again.
	// Said before a pass-on, which keeps the policy the request has.
	if err := reporter.report(ctx, interceptor.Progress{
		Message:            fmt.Sprintf("ReplicaSet %s kept pod %s when Deployment %s was scaled back.", rs.Name, pod.Name, dep.Name),
		CancellationPolicy: v1alpha1.Allow,
	}); err != nil {
		return false, nil, err
	}
	if scaleBacks >= maxScaleBacks {
		result := s.passOn(dep, PassReplicaSetKeptPod, fmt.Sprintf(
			"ReplicaSet %s kept pod %s after %d scale-backs, removing other pods: the surge interceptor passes it on.", rs.Name, pod.Name, scaleBacks))
		return false, &result, nil
	}
	if stillMarked {
		metrics.Retried.Inc()
		s.cfg.Recorder.Eventf(dep, corev1.EventTypeWarning, EventSurgeRetried,
			"ReplicaSet %s was scaled back to %d but kept pod %s (pod-deletion-cost is honored on a best-effort basis): surging again to replace it.", rs.Name, ptr.Deref(rs.Spec.Replicas, 1), pod.Name)
		klog.FromContext(ctx).Info("The ReplicaSet kept the pod after the scale-back; surging again", "replicaSet", klog.KObj(rs), "pod", klog.KObj(pod))
	}
	return true, nil, nil
}

// write writes state to dep and returns the Deployment written. A conflict
// is no error: someone (the Deployment controller, a janitor) wrote dep
// meanwhile; write returns nil and the caller looks again.
func (s *Surger) write(ctx context.Context, dep *appsv1.Deployment, state *State) (*appsv1.Deployment, error) {
	updated, err := applyState(dep, state)
	if err != nil {
		return nil, err
	}
	if err := s.updateDeployment(ctx, updated); apierrors.IsConflict(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return updated, nil
}

// join adds pod to the surge of its Deployment when the Deployment can
// surge and a slot within maxSurge is free. It returns a result when the
// request is passed on.
func (s *Surger) join(ctx context.Context, reporter *reporter, pod *corev1.Pod, rs *appsv1.ReplicaSet, dep *appsv1.Deployment, state *State) (*interceptor.Result, error) {
	original := ptr.Deref(dep.Spec.Replicas, 1)
	if state != nil {
		original = state.OriginalReplicas
	}
	replicaSets, err := s.replicaSetsOf(dep)
	if err != nil {
		return nil, err
	}
	hpas, err := s.hpas.HorizontalPodAutoscalers(dep.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	decision := Decide(dep, rs, replicaSets, hpas, original)
	if decision.Reason != "" {
		result := s.passOn(dep, decision.Reason, decision.Message)
		return &result, nil
	}
	if state == nil {
		// The availability to keep: what the Deployment has now, the pod
		// to replace included, at most its replica count. A Deployment
		// short of pods before the surge is not held to more.
		pods, err := s.podsOf(dep)
		if err != nil {
			return nil, err
		}
		availableNow, _, _ := replacements(pods, nil, dep.Spec.MinReadySeconds, s.cfg.Clock.Now())
		state = &State{Interceptor: s.cfg.Name, OriginalReplicas: original, Available: min(availableNow, original), Pods: map[types.UID]string{}}
	}
	if state.Interceptor != s.cfg.Name {
		return nil, s.waitForSurgeOf(ctx, reporter, dep, state)
	}
	if int32(len(state.Pods)) >= decision.MaxSurge {
		replacing := make([]string, 0, len(state.Pods))
		for _, name := range state.Pods {
			replacing = append(replacing, name)
		}
		sort.Strings(replacing)
		return nil, reporter.report(ctx, interceptor.Progress{Message: fmt.Sprintf(
			"Waiting for a surge slot of Deployment %s: its maxSurge of %d is taken by the replacement of %s.", dep.Name, decision.MaxSurge, strings.Join(replacing, ", ")),
			CancellationPolicy: v1alpha1.Allow})
	}
	state.Pods[pod.UID] = pod.Name
	updated, err := s.write(ctx, dep, state)
	if err != nil || updated == nil {
		return nil, err
	}
	s.cfg.Recorder.Eventf(dep, corev1.EventTypeNormal, EventSurgeStarted,
		"Scaled to %d replicas to replace pod %s, whose eviction is requested, before it goes.", *updated.Spec.Replicas, pod.Name)
	klog.FromContext(ctx).V(2).Info("Surging the Deployment", "deployment", klog.KObj(dep), "replicas", *updated.Spec.Replicas)
	reporter.estimate = ptr.To(s.cfg.Clock.Now().Add(startupEstimate + time.Duration(dep.Spec.MinReadySeconds)*time.Second))
	return nil, reporter.report(ctx, interceptor.Progress{
		Message:            fmt.Sprintf("Surging Deployment %s to %d replicas to replace pod %s.", dep.Name, *updated.Spec.Replicas, pod.Name),
		ExpectedFinishTime: reporter.estimate,
		CancellationPolicy: v1alpha1.Allow,
	})
}

// waitForSurgeOf reports that the request waits for the surge of another
// interceptor on dep to end: two surges of one Deployment would each count
// the other's replacements as their own.
func (s *Surger) waitForSurgeOf(ctx context.Context, reporter *reporter, dep *appsv1.Deployment, state *State) error {
	return reporter.report(ctx, interceptor.Progress{Message: fmt.Sprintf(
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

// markForRemoval gives pod the lowest deletion cost, so that its ReplicaSet
// removes it first, and records the cost it had to restore on a revert.
func (s *Surger) markForRemoval(ctx context.Context, pod *corev1.Pod) error {
	original, marked := pod.Annotations[OriginalDeletionCostAnnotation]
	if !marked {
		original = pod.Annotations[DeletionCostAnnotation]
	} else if pod.Annotations[MarkedByAnnotation] == s.cfg.Name {
		return nil
	}
	// Taken over from another interceptor, the mark becomes this one's and
	// the cost to restore is the one recorded: written again, so that a
	// janitor restoring the pod meanwhile cannot leave the lowest cost on it
	// with nothing to restore.
	return s.patchPodAnnotations(ctx, pod, map[string]any{
		DeletionCostAnnotation:         lowestDeletionCost,
		OriginalDeletionCostAnnotation: original,
		MarkedByAnnotation:             s.cfg.Name,
	})
}

// restoreDeletionCost undoes markForRemoval.
func (s *Surger) restoreDeletionCost(ctx context.Context, pod *corev1.Pod) error {
	original, marked := pod.Annotations[OriginalDeletionCostAnnotation]
	if !marked {
		return nil
	}
	var cost any
	if original != "" {
		cost = original
	}
	return s.patchPodAnnotations(ctx, pod, map[string]any{DeletionCostAnnotation: cost, OriginalDeletionCostAnnotation: nil, MarkedByAnnotation: nil})
}

func (s *Surger) patchPodAnnotations(ctx context.Context, pod *corev1.Pod, annotations map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID, "annotations": annotations}})
	if err != nil {
		return err
	}
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	_, err = s.cfg.Kube.CoreV1().Pods(pod.Namespace).Patch(callCtx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "surge-interceptor"})
	return err
}

// reporter reports progress when it changes; the SDK's own heartbeats keep
// the request in between.
type reporter struct {
	req  *interceptor.Request
	last string
	// estimate is the finish time expected before anything better is known.
	estimate *time.Time
}

func (r *reporter) report(ctx context.Context, p interceptor.Progress) error {
	key := fmt.Sprintf("%s|%s|%v", p.Message, p.CancellationPolicy, p.ExpectedFinishTime)
	if key == r.last {
		return nil
	}
	r.last = key
	return r.req.Report(ctx, p)
}

// sleep waits d, false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func ptrOr(r *interceptor.Result) interceptor.Result {
	if r == nil {
		return interceptor.Result{}
	}
	return *r
}
