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

// Package surge is the surge interceptor: the KEP's Deployment "pod surge"
// role, built on the interceptor SDK. When it becomes the active interceptor
// of a pod of a Deployment that can surge (RollingUpdate with maxSurge > 0,
// not paused, no rollout in progress, no HorizontalPodAutoscaler owning the
// replica count), it scales the Deployment up (at most maxSurge pods of one
// Deployment at once), waits until the replacements are available on other
// nodes, then gives the evicted pod the lowest pod-deletion-cost and scales
// the Deployment back, so that the ReplicaSet controller removes exactly that
// pod: the application never loses a ready replica. It passes every other
// request on at once, saying why.
//
// Its state lives on the objects: the surge in progress in an annotation of
// the Deployment, the lowered deletion cost (with the pod's own, to restore)
// in annotations of the pod, each naming the interceptor. A janitor reverts
// the surge of a request that interceptor no longer holds (withdrawn,
// canceled, deleted or passed over), so nothing is left half-done, across
// restarts of the interceptor too.
package surge

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// DefaultName is the interceptor name: the KEP's name of the
	// Deployment's surge role, on the server's allow-list.
	DefaultName = "deployment.apps.k8s.io"
	// DefaultLifecycleName is the responder name on lifecycle.k8s.io,
	// where names are domain-prefixed keys and k8s.io is reserved.
	DefaultLifecycleName = "evictionrequest.github.io/surge"

	// StateAnnotation on a Deployment records the surge in progress.
	StateAnnotation = "evictionrequest.coordination.k8s.io/surge"
	// DeletionCostAnnotation is the ReplicaSet controller's: among pods
	// equally ready, it removes the lowest cost first.
	DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"
	// OriginalDeletionCostAnnotation on a pod whose deletion cost the
	// interceptor lowered records the cost it had before ("" for none).
	OriginalDeletionCostAnnotation = "evictionrequest.coordination.k8s.io/surge-original-deletion-cost"
	// MarkedByAnnotation on a pod whose deletion cost was lowered names the
	// interceptor that lowered it: the cost stays while that interceptor
	// holds the pod's request under Forbid, whichever janitor looks.
	MarkedByAnnotation = "evictionrequest.coordination.k8s.io/surge-interceptor"
	// ScaleBacksAnnotation on a pod counts the scale-backs after which its
	// ReplicaSet kept it; after maxScaleBacks the request is passed on.
	ScaleBacksAnnotation = "evictionrequest.coordination.k8s.io/surge-scale-backs"
	// lowestDeletionCost makes a pod the first its ReplicaSet removes.
	lowestDeletionCost = "-2147483648"
)

// State is the surge in progress on a Deployment.
type State struct {
	// Interceptor is the name of the interceptor whose surge this is: only
	// it adds pods to the surge, and a pod's part of it is undone once that
	// interceptor no longer holds the pod's request.
	Interceptor string `json:"interceptor"`
	// OriginalReplicas is spec.replicas before the surge.
	OriginalReplicas int32 `json:"originalReplicas"`
	// Available is how many pods were available when the surge began, at
	// most OriginalReplicas: the replacements must bring the pods that are
	// not being replaced back to it before one is removed.
	Available int32 `json:"available"`
	// Pods are the pods the surge replaces, name by UID.
	Pods map[types.UID]string `json:"pods"`
}

// surged is the replica count the surge gives its Deployment.
func (s *State) surged() int32 {
	return s.OriginalReplicas + int32(len(s.Pods))
}

// need is how many available pods, besides those being replaced, the
// Deployment must have before one of them is removed.
func (s *State) need() int32 {
	return min(s.Available, s.OriginalReplicas)
}

// stateOf reads the surge in progress on dep; nil when there is none.
func stateOf(dep *appsv1.Deployment) (*State, error) {
	value, ok := dep.Annotations[StateAnnotation]
	if !ok {
		return nil, nil
	}
	var s State
	if err := json.Unmarshal([]byte(value), &s); err != nil {
		return nil, fmt.Errorf("annotation %s of Deployment %s/%s: %w", StateAnnotation, dep.Namespace, dep.Name, err)
	}
	if s.Pods == nil {
		s.Pods = map[types.UID]string{}
	}
	return &s, nil
}

// applyState writes s into a copy of dep: the replicas are the original
// ones plus one per pod being replaced, and a surge without pods is over.
func applyState(dep *appsv1.Deployment, s *State) (*appsv1.Deployment, error) {
	dep = dep.DeepCopy()
	replicas := s.surged()
	dep.Spec.Replicas = &replicas
	if len(s.Pods) == 0 {
		delete(dep.Annotations, StateAnnotation)
		return dep, nil
	}
	value, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if dep.Annotations == nil {
		dep.Annotations = map[string]string{}
	}
	dep.Annotations[StateAnnotation] = string(value)
	return dep, nil
}
