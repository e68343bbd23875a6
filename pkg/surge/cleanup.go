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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
)

// holding says whether an interceptor still holds the request of a pod,
// and whether its cancellation is forbidden (a scale-down in flight).
type holding struct {
	held, forbidden bool
}

// holdingOf says whether the interceptor named holder holds the eviction
// of the pod with uid in namespace, read as holder's participant reads it.
// lifecycle.k8s.io has no cancellation policy to mark a scale-down in
// flight: there the pod's removal counts as in flight for as long as
// holder keeps its turn.
func (s *Surger) holdingOf(ctx context.Context, namespace string, uid types.UID, holder string) (holding, error) {
	p, err := participant.New(s.api(), holder, s.cfg.Kube, s.cfg.EvictionRequests, requester.Options{CallTimeout: s.cfg.CallTimeout})
	if err != nil {
		return holding{}, err
	}
	status, err := p.Status(ctx, namespace, uid)
	if err != nil {
		return holding{}, err
	}
	held := status.HeldBy(holder)
	return holding{held: held, forbidden: held && (status.Locked || p.API() == evictionapi.Lifecycle)}, nil
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
