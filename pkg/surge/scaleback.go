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
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
	"github.com/evictionrequest/apiserver/pkg/util/podlookup"
)

// scaleBackSettled reports whether the scale-back of dep has run its course
// in rs: the Deployment controller has seen dep's replica count and passed
// it to rs, and the ReplicaSet controller has seen that and has exactly
// that many pods that are not being deleted. Before then the removal of a
// marked pod may still be to come.
func scaleBackSettled(dep *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	replicas := ptr.Deref(dep.Spec.Replicas, 1)
	return dep.Status.ObservedGeneration >= dep.Generation &&
		ptr.Deref(rs.Spec.Replicas, 1) == replicas &&
		rs.Status.ObservedGeneration >= rs.Generation &&
		rs.Status.Replicas == replicas
}

// keptAfterScaleBack returns pod as the API server has it when rs finished
// the scale-back of dep and kept the pod all the same, nil otherwise. The
// pod-deletion-cost annotation is honored on a best-effort basis: a
// ReplicaSet controller whose cache has not seen the lowered cost yet
// removes another pod, typically the replacement. The pod is read from the
// API server because the ReplicaSet's status is written after its pod
// deletions and the cache may lag behind them.
func (s *Surger) keptAfterScaleBack(ctx context.Context, pod *corev1.Pod, rs *appsv1.ReplicaSet, dep *appsv1.Deployment) (*corev1.Pod, error) {
	if !scaleBackSettled(dep, rs) {
		return nil, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	live, err := podlookup.Live(callCtx, s.cfg.Kube.CoreV1(), pod.Namespace, pod.Name)
	if err != nil || live == nil || live.UID != pod.UID || live.DeletionTimestamp != nil {
		return nil, err
	}
	return live, nil
}

// awaitRemoval waits until the ReplicaSet of dep removes pod after a
// scale-back. When the ReplicaSet removed another pod instead, most likely
// the replacement, it restores the pod's deletion cost, counts the
// scale-back on the pod, and lets the next call surge again, rather than
// leave the request waiting for a removal that never comes; after
// maxScaleBacks it passes the request on.
func (s *Surger) awaitRemoval(ctx context.Context, req *interceptor.Request, pod *corev1.Pod, rs *appsv1.ReplicaSet, dep *appsv1.Deployment) (interceptor.Result, error) {
	live, err := s.keptAfterScaleBack(ctx, pod, rs, dep)
	if err != nil {
		return interceptor.Result{}, err
	}
	if live == nil {
		return s.again(), req.Report(ctx, interceptor.Progress{
			Message:            fmt.Sprintf("Deployment %s was scaled back to %d; waiting for ReplicaSet %s to remove pod %s.", dep.Name, ptr.Deref(dep.Spec.Replicas, 1), rs.Name, pod.Name),
			CancellationPolicy: v1alpha1.Forbid,
		})
	}
	if _, marked := live.Annotations[OriginalDeletionCostAnnotation]; !marked {
		// A call whose writes the cache does not show yet restored it.
		return s.again(), nil
	}
	scaleBacks := scaleBacksOf(live) + 1
	if err := s.restoreKeptPod(ctx, live, scaleBacks); err != nil {
		return interceptor.Result{}, err
	}
	// No removal is in flight any more: the request may be canceled again.
	// Said before a pass-on, which keeps the policy the request has.
	if err := req.Report(ctx, interceptor.Progress{
		Message:            fmt.Sprintf("ReplicaSet %s kept pod %s when Deployment %s was scaled back.", rs.Name, pod.Name, dep.Name),
		CancellationPolicy: v1alpha1.Allow,
	}); err != nil {
		return interceptor.Result{}, err
	}
	if scaleBacks >= maxScaleBacks {
		return s.passOn(dep, PassReplicaSetKeptPod, fmt.Sprintf(
			"ReplicaSet %s kept pod %s after %d scale-backs, removing other pods: the surge interceptor passes it on.", rs.Name, pod.Name, scaleBacks)), nil
	}
	metrics.Retried.Inc()
	s.cfg.Recorder.Eventf(dep, corev1.EventTypeWarning, EventSurgeRetried,
		"ReplicaSet %s was scaled back to %d but kept pod %s (pod-deletion-cost is honored on a best-effort basis): surging again to replace it.", rs.Name, ptr.Deref(rs.Spec.Replicas, 1), pod.Name)
	klog.FromContext(ctx).Info("The ReplicaSet kept the pod after the scale-back; surging again", "replicaSet", klog.KObj(rs), "pod", klog.KObj(pod))
	return s.again(), nil
}

// scaleBacksOf counts the scale-backs after which pod's ReplicaSet kept it.
func scaleBacksOf(pod *corev1.Pod) int {
	n, err := strconv.Atoi(pod.Annotations[ScaleBacksAnnotation])
	if err != nil {
		return 0
	}
	return n
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
	if _, marked := pod.Annotations[OriginalDeletionCostAnnotation]; !marked {
		return nil
	}
	return s.patchPodAnnotations(ctx, pod, restoredAnnotations(pod))
}

// restoreKeptPod undoes markForRemoval of a pod the ReplicaSet kept, and
// records how many scale-backs it was kept through.
func (s *Surger) restoreKeptPod(ctx context.Context, pod *corev1.Pod, scaleBacks int) error {
	annotations := restoredAnnotations(pod)
	annotations[ScaleBacksAnnotation] = strconv.Itoa(scaleBacks)
	return s.patchPodAnnotations(ctx, pod, annotations)
}

// restoredAnnotations is the merge patch of pod's annotations that gives
// it back the deletion cost it had before markForRemoval.
func restoredAnnotations(pod *corev1.Pod) map[string]any {
	var cost any
	if original := pod.Annotations[OriginalDeletionCostAnnotation]; original != "" {
		cost = original
	}
	return map[string]any{DeletionCostAnnotation: cost, OriginalDeletionCostAnnotation: nil, MarkedByAnnotation: nil}
}

// patchPodAnnotations merges annotations into pod, guarded by its UID, as
// the interceptor's field manager.
func (s *Surger) patchPodAnnotations(ctx context.Context, pod *corev1.Pod, annotations map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID, "annotations": annotations}})
	if err != nil {
		return err
	}
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	_, err = s.cfg.Kube.CoreV1().Pods(pod.Namespace).Patch(callCtx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: s.cfg.Name})
	return err
}
