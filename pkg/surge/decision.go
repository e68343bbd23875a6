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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// PassReason says why the interceptor passes a request on.
type PassReason string

// The reasons the interceptor cannot help; the request then goes on to the
// next interceptor or to the Eviction API.
const (
	PassNoDeployment      PassReason = "NoDeployment"
	PassRecreate          PassReason = "Recreate"
	PassNoMaxSurge        PassReason = "NoMaxSurge"
	PassPaused            PassReason = "Paused"
	PassRolloutInProgress PassReason = "RolloutInProgress"
	PassAutoscaled        PassReason = "HorizontalPodAutoscaler"
	// PassReplicaSetKeptPod is a pod the ReplicaSet kept on maxScaleBacks
	// scale-backs, removing other pods each time (a template that gives
	// every pod the lowest deletion cost, for example).
	PassReplicaSetKeptPod PassReason = "ReplicaSetKeptPod"
	// PassUndeclared is a pod of a Deployment of other than one replica
	// whose pod template does not name the interceptor: a participant rule
	// added it to the pod (docs/participants.md), and a rule can select
	// Deployments' pods only by what a pod shows at its creation, not by
	// its Deployment's replicas. A surge is for what the rule means to
	// protect, a Deployment whose only pod an eviction would take down;
	// the others were given no say and keep their PodDisruptionBudgets.
	PassUndeclared PassReason = "Undeclared"
)

// PassReasons are every reason, for the metrics.
var PassReasons = []PassReason{PassNoDeployment, PassRecreate, PassNoMaxSurge, PassPaused, PassRolloutInProgress, PassAutoscaled, PassReplicaSetKeptPod, PassUndeclared}

// Decision is whether a Deployment's pod can be replaced by a surge.
type Decision struct {
	// MaxSurge is how many of the Deployment's pods may be replaced at once;
	// zero when the request is passed on.
	MaxSurge int32
	// Reason and Message say why the request is passed on.
	Reason  PassReason
	Message string
}

// Undeclared judges a pod of dep when dep's pod template does not name the
// interceptor name (declared is false): it passes the request on unless dep
// has one replica (originalReplicas, without a surge of ours).
func Undeclared(dep *appsv1.Deployment, name string, declared bool, originalReplicas int32) Decision {
	if declared || originalReplicas == 1 {
		return Decision{}
	}
	return Decision{Reason: PassUndeclared, Message: fmt.Sprintf(
		"Deployment %s: it has %d replicas and its pod template does not name %s; added to its pods by a participant rule, "+
			"the surge interceptor protects one-replica Deployments only, and the eviction goes on under the PodDisruptionBudgets.",
		dep.Name, originalReplicas, name)}
}

// Decide judges whether the pods of dep can be replaced by a surge. rs is
// the ReplicaSet of the pod, replicaSets all of dep's, hpas those of the
// namespace; originalReplicas is dep's replica count without a surge of
// ours.
func Decide(dep *appsv1.Deployment, rs *appsv1.ReplicaSet, replicaSets []*appsv1.ReplicaSet, hpas []*autoscalingv2.HorizontalPodAutoscaler, originalReplicas int32) Decision {
	pass := func(reason PassReason, format string, args ...any) Decision {
		return Decision{Reason: reason, Message: fmt.Sprintf("Deployment %s: ", dep.Name) + fmt.Sprintf(format, args...)}
	}
	for _, hpa := range hpas {
		ref := hpa.Spec.ScaleTargetRef
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.Group == appsv1.GroupName && ref.Kind == "Deployment" && ref.Name == dep.Name {
			return pass(PassAutoscaled, "HorizontalPodAutoscaler %s owns its replica count; the surge interceptor leaves it alone and the eviction goes on without a surge.", hpa.Name)
		}
	}
	if dep.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return pass(PassRecreate, "its Recreate strategy replaces pods by deleting them first; it cannot surge.")
	}
	if dep.Spec.Paused {
		return pass(PassPaused, "it is paused; a surge would not be rolled out.")
	}
	maxSurge := intstr.FromString("25%")
	if ru := dep.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxSurge != nil {
		maxSurge = *ru.MaxSurge
	}
	surge, err := intstr.GetScaledValueFromIntOrPercent(&maxSurge, int(originalReplicas), true)
	if err != nil || surge <= 0 {
		return pass(PassNoMaxSurge, "its RollingUpdate strategy has maxSurge %s, so it cannot scale up first.", maxSurge.String())
	}
	for _, other := range replicaSets {
		if other.UID != rs.UID && (ptr.Deref(other.Spec.Replicas, 0) > 0 || other.Status.Replicas > 0) {
			return pass(PassRolloutInProgress, "a rollout is in progress (ReplicaSets %s and %s both have pods); a surge would mix with it.", rs.Name, other.Name)
		}
	}
	return Decision{MaxSurge: int32(surge)}
}
