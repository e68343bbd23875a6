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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// EvictionRequestWrapper builds a v1alpha1 EvictionRequest.
type EvictionRequestWrapper struct{ v1alpha1.EvictionRequest }

// MakeEvictionRequest starts the EvictionRequest of pod as the server stores
// it after creation: named after the pod's UID, of type Soft, with the
// default heartbeat deadline and the Allow policy, requested by
// requesters.
func MakeEvictionRequest(pod *corev1.Pod, requesters ...string) *EvictionRequestWrapper {
	w := &EvictionRequestWrapper{v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: string(pod.UID), Generation: 1},
		Spec: v1alpha1.EvictionRequestSpec{
			Type:                     v1alpha1.Soft,
			Target:                   v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: pod.Name, UID: string(pod.UID)}},
			HeartbeatDeadlineSeconds: ptr.To(v1alpha1.DefaultHeartbeatDeadlineSeconds),
		},
		Status: v1alpha1.EvictionRequestStatus{EvictionRequestCancellationPolicy: ptr.To(v1alpha1.Allow)},
	}}
	return w.Requesters(requesters...)
}

// Obj returns the EvictionRequest.
func (w *EvictionRequestWrapper) Obj() *v1alpha1.EvictionRequest { return &w.EvictionRequest }

// Requesters appends requesters to spec.requesters.
func (w *EvictionRequestWrapper) Requesters(names ...string) *EvictionRequestWrapper {
	for _, name := range names {
		w.Spec.Requesters = append(w.Spec.Requesters, v1alpha1.Requester{Name: name})
	}
	return w
}

// Interceptors appends interceptors to spec.interceptors, index 0 first.
func (w *EvictionRequestWrapper) Interceptors(names ...string) *EvictionRequestWrapper {
	for _, name := range names {
		w.Spec.Interceptors = append(w.Spec.Interceptors, v1alpha1.Interceptor{Name: name})
	}
	return w
}

// HeartbeatDeadlineSeconds sets spec.heartbeatDeadlineSeconds.
func (w *EvictionRequestWrapper) HeartbeatDeadlineSeconds(s int32) *EvictionRequestWrapper {
	w.Spec.HeartbeatDeadlineSeconds = ptr.To(s)
	return w
}

// Created sets the creation time.
func (w *EvictionRequestWrapper) Created(at time.Time) *EvictionRequestWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// AppliedBy records an apply of manager at at in managedFields, as the
// server records one.
func (w *EvictionRequestWrapper) AppliedBy(manager string, at time.Time) *EvictionRequestWrapper {
	w.ManagedFields = append(w.ManagedFields, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: v1alpha1.SchemeGroupVersion.String(), Time: ptr.To(metav1.NewTime(at)), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1("{}")})
	return w
}

// Active makes name the active interceptor.
func (w *EvictionRequestWrapper) Active(name string) *EvictionRequestWrapper {
	w.Status.ActiveInterceptorName = ptr.To(name)
	return w
}

// ActiveCompleted marks the active interceptor's turn complete.
func (w *EvictionRequestWrapper) ActiveCompleted() *EvictionRequestWrapper {
	w.Status.ActiveInterceptorCompleted = true
	return w
}

// Heartbeat sets status.heartbeatTime.
func (w *EvictionRequestWrapper) Heartbeat(at time.Time) *EvictionRequestWrapper {
	w.Status.HeartbeatTime = ptr.To(metav1.NewTime(at))
	return w
}

// ExpectedFinish sets status.expectedInterceptorFinishTime.
func (w *EvictionRequestWrapper) ExpectedFinish(at time.Time) *EvictionRequestWrapper {
	w.Status.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(at))
	return w
}

// Policy sets status.evictionRequestCancellationPolicy.
func (w *EvictionRequestWrapper) Policy(policy v1alpha1.EvictionRequestCancellationPolicy) *EvictionRequestWrapper {
	w.Status.EvictionRequestCancellationPolicy = ptr.To(policy)
	return w
}

// FailedEvictions sets status.podEvictionStatus.failedAPIEvictionCounter.
func (w *EvictionRequestWrapper) FailedEvictions(n int32) *EvictionRequestWrapper {
	w.Status.PodEvictionStatus = &v1alpha1.PodEvictionStatus{FailedAPIEvictionCounter: n}
	return w
}

// Annotation sets an annotation.
func (w *EvictionRequestWrapper) Annotation(key, value string) *EvictionRequestWrapper {
	w.Annotations = setKey(w.Annotations, key, value)
	return w
}

// Message sets status.message.
func (w *EvictionRequestWrapper) Message(message string) *EvictionRequestWrapper {
	w.Status.Message = message
	return w
}

// Complete sets the Complete condition to True with reason and message,
// as the controller ends a request.
func (w *EvictionRequestWrapper) Complete(reason, message string) *EvictionRequestWrapper {
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
		Type: string(v1alpha1.EvictionRequestComplete), Status: metav1.ConditionTrue, Reason: reason, Message: message,
	})
	w.Status.ActiveInterceptorName = nil
	return w
}
