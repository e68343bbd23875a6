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
	"k8s.io/utils/ptr"

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
