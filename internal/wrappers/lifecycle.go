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

package wrappers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Responders declares eviction responders on the pod, in spec.evictionResponders.
func (w *PodWrapper) Responders(responders ...corev1.EvictionResponder) *PodWrapper {
	w.Spec.EvictionResponders = append(w.Spec.EvictionResponders, responders...)
	return w
}

// Responder is an eviction responder of a pod.
func Responder(name string, priority int32) corev1.EvictionResponder {
	return corev1.EvictionResponder{Name: name, Priority: ptr.To(priority)}
}

// LifecycleRequestWrapper builds a lifecycle.k8s.io/v1alpha1 EvictionRequest.
type LifecycleRequestWrapper struct {
	lifecyclev1alpha1.EvictionRequest
}

// MakeLifecycleRequest starts the EvictionRequest named name of requester
// for pod, with the Eviction intent.
func MakeLifecycleRequest(name string, pod *corev1.Pod, requester string) *LifecycleRequestWrapper {
	return &LifecycleRequestWrapper{lifecyclev1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: lifecyclev1alpha1.EvictionRequestSpec{
			Target:    lifecyclev1alpha1.EvictionRequestTarget{Pod: &lifecyclev1alpha1.EvictionRequestPodReference{Name: pod.Name, UID: pod.UID}},
			Requester: requester,
			Intent:    lifecyclev1alpha1.EvictionRequestIntentEviction,
		},
	}}
}

// Obj returns the EvictionRequest.
func (w *LifecycleRequestWrapper) Obj() *lifecyclev1alpha1.EvictionRequest { return &w.EvictionRequest }

// Annotation sets an annotation.
func (w *LifecycleRequestWrapper) Annotation(key, value string) *LifecycleRequestWrapper {
	w.Annotations = setKey(w.Annotations, key, value)
	return w
}

// Withdrawn sets the intent to Withdrawn.
func (w *LifecycleRequestWrapper) Withdrawn() *LifecycleRequestWrapper {
	w.Spec.Intent = lifecyclev1alpha1.EvictionRequestIntentWithdrawn
	return w
}

// Deleting marks the request as being deleted since at.
func (w *LifecycleRequestWrapper) Deleting(at time.Time) *LifecycleRequestWrapper {
	w.DeletionTimestamp = ptr.To(metav1.NewTime(at))
	return w
}

// AppliedBy records an apply of manager at at in managedFields, as the
// server records one.
func (w *LifecycleRequestWrapper) AppliedBy(manager string, at time.Time) *LifecycleRequestWrapper {
	w.ManagedFields = append(w.ManagedFields, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: lifecyclev1alpha1.SchemeGroupVersion.String(), Time: ptr.To(metav1.NewTime(at)), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1("{}")})
	return w
}

// Condition sets a condition of the request's status.
func (w *LifecycleRequestWrapper) Condition(t lifecyclev1alpha1.EvictionConditionType, status metav1.ConditionStatus, reason lifecyclev1alpha1.EvictionConditionReason, at time.Time) *LifecycleRequestWrapper {
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: string(t), Status: status, Reason: string(reason), LastTransitionTime: metav1.NewTime(at), ObservedGeneration: w.Generation,
	})
	return w
}

// Created sets the creation time.
func (w *LifecycleRequestWrapper) Created(at time.Time) *LifecycleRequestWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// EvictionWrapper builds a lifecycle.k8s.io/v1alpha1 Eviction.
type EvictionWrapper struct{ lifecyclev1alpha1.Eviction }

// MakeEviction starts the Eviction named name of pod, as the controller
// creates it.
func MakeEviction(name string, pod *corev1.Pod) *EvictionWrapper {
	return &EvictionWrapper{lifecyclev1alpha1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: lifecyclev1alpha1.EvictionSpec{
			Target: lifecyclev1alpha1.EvictionTarget{Pod: &lifecyclev1alpha1.EvictionPodReference{Name: pod.Name, UID: pod.UID}},
		},
	}}
}

// Obj returns the Eviction.
func (w *EvictionWrapper) Obj() *lifecyclev1alpha1.Eviction { return &w.Eviction }

// Name renames the Eviction (and its UID with it).
func (w *EvictionWrapper) Name(name string) *EvictionWrapper {
	w.Eviction.Name, w.UID = name, types.UID("uid-"+name)
	return w
}

// Created sets the creation time.
func (w *EvictionWrapper) Created(at time.Time) *EvictionWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Label sets a label.
func (w *EvictionWrapper) Label(key, value string) *EvictionWrapper {
	w.Labels = setKey(w.Labels, key, value)
	return w
}

// Requester lists a requester in status.requesters.
func (w *EvictionWrapper) Requester(name string, intent lifecyclev1alpha1.RequesterIntent) *EvictionWrapper {
	w.Status.Requesters = append(w.Status.Requesters, lifecyclev1alpha1.Requester{Name: name, Intent: intent})
	return w
}

// TargetResponder lists a responder in status.targetResponders, with its
// entry in status.responders.
func (w *EvictionWrapper) TargetResponder(name string, priority int32, state lifecyclev1alpha1.ResponderStateType) *EvictionWrapper {
	w.Status.TargetResponders = append(w.Status.TargetResponders, lifecyclev1alpha1.TargetResponder{Name: name, Priority: ptr.To(priority), State: state})
	w.Status.Responders = append(w.Status.Responders, lifecyclev1alpha1.ResponderStatus{Name: name})
	w.Status.ObservedGeneration = ptr.To(w.Generation)
	return w
}

// State sets the state of a responder listed in status.targetResponders.
func (w *EvictionWrapper) State(name string, state lifecyclev1alpha1.ResponderStateType) *EvictionWrapper {
	for i := range w.Status.TargetResponders {
		if w.Status.TargetResponders[i].Name == name {
			w.Status.TargetResponders[i].State = state
		}
	}
	return w
}

// Started sets the start time of a responder's turn.
func (w *EvictionWrapper) Started(name string, at time.Time) *EvictionWrapper {
	w.entry(name).StartTime = ptr.To(metav1.NewTime(at))
	return w
}

// Heartbeat sets a responder's heartbeat time.
func (w *EvictionWrapper) Heartbeat(name string, at time.Time) *EvictionWrapper {
	w.entry(name).HeartbeatTime = ptr.To(metav1.NewTime(at))
	return w
}

// CompletedAt sets a responder's completion time.
func (w *EvictionWrapper) CompletedAt(name string, at time.Time) *EvictionWrapper {
	w.entry(name).CompletionTime = ptr.To(metav1.NewTime(at))
	return w
}

// ResponderMessage sets a responder's message.
func (w *EvictionWrapper) ResponderMessage(name, message string) *EvictionWrapper {
	w.entry(name).Message = ptr.To(message)
	return w
}

// Condition sets a condition.
func (w *EvictionWrapper) Condition(t lifecyclev1alpha1.EvictionConditionType, status metav1.ConditionStatus, reason lifecyclev1alpha1.EvictionConditionReason, at time.Time) *EvictionWrapper {
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: string(t), Status: status, Reason: string(reason), LastTransitionTime: metav1.NewTime(at), ObservedGeneration: w.Generation,
	})
	return w
}

func (w *EvictionWrapper) entry(name string) *lifecyclev1alpha1.ResponderStatus {
	for i := range w.Status.Responders {
		if w.Status.Responders[i].Name == name {
			return &w.Status.Responders[i]
		}
	}
	w.Status.Responders = append(w.Status.Responders, lifecyclev1alpha1.ResponderStatus{Name: name})
	return &w.Status.Responders[len(w.Status.Responders)-1]
}
