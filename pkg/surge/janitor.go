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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	erutil "github.com/evictionrequest/apiserver/pkg/api/v1alpha1/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
)

// RunJanitor undoes, every period until ctx ends, what surges whose request
// the interceptor that made them no longer holds left behind: it scales
// their Deployments back and restores the deletion cost of their pods. It
// judges by the interceptor named in the surge and the mark, not by its own
// name, so that surge interceptors of several names (or namespaces) in a
// cluster agree on what is left behind.
func (s *Surger) RunJanitor(ctx context.Context, period time.Duration) {
	wait.UntilWithContext(ctx, s.cleanUp, period)
}

// holding says whether an interceptor still holds the request of a pod,
// and whether its cancellation is forbidden (a scale-down in flight).
type holding struct {
	held, forbidden bool
}

// holdingOf reads the EvictionRequest of the pod with uid in namespace and
// says whether the interceptor named holder holds it.
func (s *Surger) holdingOf(ctx context.Context, namespace string, uid types.UID, holder string) (holding, error) {
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	er, err := s.cfg.EvictionRequests.CoordinationV1alpha1().EvictionRequests(namespace).Get(callCtx, string(uid), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return holding{}, nil
	}
	if err != nil {
		return holding{}, err
	}
	held := erutil.IsHeldBy(er, holder)
	return holding{held: held, forbidden: held && erutil.CancellationForbidden(er)}, nil
}

func (s *Surger) cleanUp(ctx context.Context) {
	deployments, err := s.deployments.List(labels.Everything())
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Listing Deployments")
		return
	}
	inProgress := 0
	for _, dep := range deployments {
		state, err := currentState(dep)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Reading the surge of a Deployment", "deployment", klog.KObj(dep))
			continue
		}
		if state == nil {
			continue
		}
		left, err := s.cleanUpDeployment(ctx, dep, state)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Cleaning up the surge of a Deployment", "deployment", klog.KObj(dep))
		}
		if state.Interceptor == s.cfg.Name {
			inProgress += left
		}
	}
	metrics.InProgress.Set(float64(inProgress))

	// A pod whose deletion cost was lowered keeps it only while its
	// removal is in flight.
	pods, err := s.pods.List(labels.Everything())
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Listing pods")
		return
	}
	for _, pod := range pods {
		if _, marked := pod.Annotations[OriginalDeletionCostAnnotation]; !marked || pod.DeletionTimestamp != nil {
			continue
		}
		h, err := s.holdingOf(ctx, pod.Namespace, pod.UID, pod.Annotations[MarkedByAnnotation])
		if err != nil || h.forbidden {
			continue
		}
		if err := s.restoreDeletionCost(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
			utilruntime.HandleErrorWithContext(ctx, err, "Restoring the deletion cost of a pod", "pod", klog.KObj(pod))
			continue
		}
		klog.FromContext(ctx).V(2).Info("Restored the deletion cost of a pod whose removal is no longer in flight", "pod", klog.KObj(pod), "held", h.held)
	}
}

// cleanUpDeployment drops from state, the surge of dep, the pods that are
// gone or whose request the surge's interceptor no longer holds, scaling it
// back, and returns how many pods the surge still replaces.
func (s *Surger) cleanUpDeployment(ctx context.Context, dep *appsv1.Deployment, state *State) (int, error) {
	// Until the Deployment is written, every pod of the surge is in it.
	surging := len(state.Pods)
	var reverted []string
	changed := false
	for uid, name := range state.Pods {
		// A pod the handler just added may not be in the cache yet.
		pod, err := s.livePod(ctx, types.NamespacedName{Namespace: dep.Namespace, Name: name}, uid)
		if err != nil {
			return surging, err
		}
		gone := pod == nil
		if !gone {
			h, err := s.holdingOf(ctx, dep.Namespace, uid, state.Interceptor)
			if err != nil {
				return surging, err
			}
			if h.held {
				continue
			}
			// A mark another interceptor made since (a hand-over, then a
			// surge of its own that this cache does not show) is judged by
			// the loop over the marked pods, by the name on the mark.
			if by := pod.Annotations[MarkedByAnnotation]; by == "" || by == state.Interceptor {
				if err := s.restoreDeletionCost(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
					return surging, err
				}
			}
			reverted = append(reverted, name)
		}
		delete(state.Pods, uid)
		changed = true
	}
	if !changed {
		return surging, nil
	}
	updated, err := s.write(ctx, dep, state)
	if err != nil {
		return surging, err
	}
	if updated == nil {
		// The handler, or the janitor of another surge interceptor, wrote
		// it meanwhile: looked at again next round.
		klog.FromContext(ctx).V(4).Info("Deployment changed while cleaning up its surge", "deployment", klog.KObj(dep))
		return surging, nil
	}
	for _, name := range reverted {
		metrics.Reverted.Inc()
		s.cfg.Recorder.Eventf(dep, corev1.EventTypeNormal, EventSurgeReverted,
			"The eviction of pod %s is no longer asked of the surge interceptor (withdrawn, canceled or passed on): scaled back to %d replicas.", name, *updated.Spec.Replicas)
	}
	klog.FromContext(ctx).V(2).Info("Cleaned up a surge", "deployment", klog.KObj(dep), "reverted", reverted, "replicas", *updated.Spec.Replicas)
	return len(state.Pods), nil
}
