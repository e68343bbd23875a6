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

// Package wrappers builds the objects unit tests need, after the
// Kubernetes scheduler's testing wrappers:
// MakePod("web-0").Node("node-a").OwnedBy(rs).Obj(). Each builder starts
// from a valid object and every method returns the builder, so that a test
// names only what matters to it.
package wrappers

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// DefaultNamespace is the namespace of every object a builder makes unless
// told otherwise.
const DefaultNamespace = "shop"

// PodWrapper builds a Pod.
type PodWrapper struct{ corev1.Pod }

// MakePod starts a running pod named name in DefaultNamespace, with the UID
// "uid-<name>".
func MakePod(name string) *PodWrapper {
	return &PodWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

// Obj returns the pod.
func (w *PodWrapper) Obj() *corev1.Pod { return &w.Pod }

// Namespace sets the namespace.
func (w *PodWrapper) Namespace(ns string) *PodWrapper { w.Pod.Namespace = ns; return w }

// UID sets the UID.
func (w *PodWrapper) UID(uid string) *PodWrapper { w.Pod.UID = types.UID(uid); return w }

// Node binds the pod to node.
func (w *PodWrapper) Node(node string) *PodWrapper { w.Spec.NodeName = node; return w }

// Label sets a label.
func (w *PodWrapper) Label(key, value string) *PodWrapper {
	w.Labels = setKey(w.Labels, key, value)
	return w
}

// Annotation sets an annotation.
func (w *PodWrapper) Annotation(key, value string) *PodWrapper {
	w.Annotations = setKey(w.Annotations, key, value)
	return w
}

// ContainerFinished gives the pod one container, terminated at at.
func (w *PodWrapper) ContainerFinished(at time.Time) *PodWrapper {
	w.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(at)}},
	}}
	return w
}

// Interceptors lists the pod's interceptors in its annotation, index 0 first.
func (w *PodWrapper) Interceptors(names ...string) *PodWrapper {
	return w.Annotation(v1alpha1.PodInterceptorsAnnotation, strings.Join(names, ","))
}

// OwnedBy makes owner, of the given API version and kind, the pod's controller.
func (w *PodWrapper) OwnedBy(apiVersion, kind, name string, uid types.UID) *PodWrapper {
	w.OwnerReferences = append(w.OwnerReferences, controllerRef(apiVersion, kind, name, uid))
	return w
}

// OwnedByReplicaSet makes rs the pod's controller.
func (w *PodWrapper) OwnedByReplicaSet(rs *appsv1.ReplicaSet) *PodWrapper {
	return w.OwnedBy("apps/v1", "ReplicaSet", rs.Name, rs.UID)
}

// DaemonSet makes an apps DaemonSet the pod's controller.
func (w *PodWrapper) DaemonSet() *PodWrapper {
	return w.OwnedBy("apps/v1", "DaemonSet", "ds", "uid-ds")
}

// Mirror makes the pod the mirror of a kubelet's static pod.
func (w *PodWrapper) Mirror() *PodWrapper { return w.Annotation(corev1.MirrorPodAnnotationKey, "hash") }

// Phase sets the phase.
func (w *PodWrapper) Phase(phase corev1.PodPhase) *PodWrapper { w.Status.Phase = phase; return w }

// Terminating marks the pod as being deleted since at.
func (w *PodWrapper) Terminating(at time.Time) *PodWrapper {
	w.DeletionTimestamp = ptr.To(metav1.NewTime(at))
	return w
}

// Ready marks the pod Ready since at.
func (w *PodWrapper) Ready(at time.Time) *PodWrapper {
	w.Status.Conditions = append(w.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)})
	return w
}

// Created sets the creation time.
func (w *PodWrapper) Created(at time.Time) *PodWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// EmptyDir adds an emptyDir volume.
func (w *PodWrapper) EmptyDir(name string) *PodWrapper {
	w.Spec.Volumes = append(w.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	return w
}

func controllerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

func setKey(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}

// NodeWrapper builds a Node.
type NodeWrapper struct{ corev1.Node }

// MakeNode starts a Ready, schedulable node named name.
func MakeNode(name string) *NodeWrapper {
	return &NodeWrapper{corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}},
	}}
}

// Obj returns the node.
func (w *NodeWrapper) Obj() *corev1.Node { return &w.Node }

// Annotation sets an annotation.
func (w *NodeWrapper) Annotation(key, value string) *NodeWrapper {
	w.Annotations = setKey(w.Annotations, key, value)
	return w
}

// Label sets a label.
func (w *NodeWrapper) Label(key, value string) *NodeWrapper {
	w.Labels = setKey(w.Labels, key, value)
	return w
}

// Unschedulable cordons the node.
func (w *NodeWrapper) Unschedulable() *NodeWrapper { w.Spec.Unschedulable = true; return w }

// Condition sets a condition, replacing one of the same type.
func (w *NodeWrapper) Condition(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) *NodeWrapper {
	c := corev1.NodeCondition{Type: t, Status: status, Reason: reason, Message: message}
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == t {
			w.Status.Conditions[i] = c
			return w
		}
	}
	w.Status.Conditions = append(w.Status.Conditions, c)
	return w
}

// Conditions replaces the node's conditions with cs, in their order,
// duplicates and all.
func (w *NodeWrapper) Conditions(cs ...corev1.NodeCondition) *NodeWrapper {
	w.Status.Conditions = cs
	return w
}

// DeploymentWrapper builds a Deployment.
type DeploymentWrapper struct{ appsv1.Deployment }

// MakeDeployment starts a one-replica Deployment named name, rolling
// updates with maxSurge and maxUnavailable of 25%, selecting app=<name>.
func MakeDeployment(name string) *DeploymentWrapper {
	quarter := ptr.To(intstr.Parse("25%"))
	return &DeploymentWrapper{appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: quarter, MaxUnavailable: quarter}},
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1},
	}}
}

// Obj returns the Deployment.
func (w *DeploymentWrapper) Obj() *appsv1.Deployment { return &w.Deployment }

// Replicas sets spec.replicas; nil leaves it unset (the API defaults it to 1).
func (w *DeploymentWrapper) Replicas(n *int32) *DeploymentWrapper { w.Spec.Replicas = n; return w }

// MaxSurge sets the rolling update's maxSurge, a count or a percentage.
func (w *DeploymentWrapper) MaxSurge(v string) *DeploymentWrapper {
	w.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.Parse(v))
	return w
}

// MinReadySeconds sets spec.minReadySeconds.
func (w *DeploymentWrapper) MinReadySeconds(s int32) *DeploymentWrapper {
	w.Spec.MinReadySeconds = s
	return w
}

// Annotation sets an annotation.
func (w *DeploymentWrapper) Annotation(key, value string) *DeploymentWrapper {
	w.Annotations = setKey(w.Annotations, key, value)
	return w
}

// ReplicaSetWrapper builds a ReplicaSet.
type ReplicaSetWrapper struct{ appsv1.ReplicaSet }

// MakeReplicaSet starts a ReplicaSet named name of replicas pods.
func MakeReplicaSet(name string, replicas int32) *ReplicaSetWrapper {
	return &ReplicaSetWrapper{appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas)},
		Status:     appsv1.ReplicaSetStatus{Replicas: replicas, ObservedGeneration: 1},
	}}
}

// Obj returns the ReplicaSet.
func (w *ReplicaSetWrapper) Obj() *appsv1.ReplicaSet { return &w.ReplicaSet }

// OwnedBy makes dep the ReplicaSet's controller, with dep's selector.
func (w *ReplicaSetWrapper) OwnedBy(dep *appsv1.Deployment) *ReplicaSetWrapper {
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	w.OwnerReferences = append(w.OwnerReferences, controllerRef(gvk.GroupVersion().String(), gvk.Kind, dep.Name, dep.UID))
	w.Spec.Selector = dep.Spec.Selector
	return w
}

// RefusedByBudget is the Eviction API's refusal when the PodDisruptionBudget
// budget allows no disruption: 429 with a cause naming it.
func RefusedByBudget(budget string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget " + budget + " needs 1 healthy pods and has 1 currently",
	})
	return err
}
