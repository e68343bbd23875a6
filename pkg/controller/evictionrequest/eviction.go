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

package evictionrequest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest/metrics"
)

// evict asks the Eviction API to evict the pod of a request no interceptor
// handles any more, unless the pod is terminating already or is a pod the
// API must not evict, and unless the backoff of earlier failures still runs.
func (c *Controller) evict(ctx context.Context, key string, er *v1alpha1.EvictionRequest, pod *corev1.Pod, now time.Time) (time.Duration, error) {
	logger := klog.FromContext(ctx)
	if pod.DeletionTimestamp != nil {
		// The request completes once the pod is gone.
		c.backoff.forget(key)
		return 0, c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) {
			status.Message = fmt.Sprintf("Pod %s is terminating; waiting for it to be gone.", pod.Name)
		})
	}
	if kind := podutil.WhyNotEvictable(pod); kind != "" {
		message := fmt.Sprintf("Pod %s is a %s pod: the eviction request controller does not evict it through the Eviction API; an interceptor or its owner must terminate it.", pod.Name, kind)
		if er.Status.Message == message {
			return 0, nil
		}
		if err := c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) { status.Message = message }); err != nil {
			return 0, err
		}
		c.eventf(er, corev1.EventTypeWarning, EventEvictionNotSupported, "%s", message)
		return 0, nil
	}
	if wait := c.backoff.wait(key, now); wait > 0 {
		return wait, nil
	}

	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	err := c.kubeClient.PolicyV1().Evictions(pod.Namespace).Evict(callCtx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		// The UID precondition keeps a pod that replaced ours under the same
		// name from being evicted in its place.
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID(er.Spec.Target.PodRef.UID))}},
	})
	switch {
	case err == nil:
		metrics.Evictions.WithLabelValues(metrics.ResultSuccess).Inc()
		c.backoff.succeeded(key, now)
		message := fmt.Sprintf("Pod %s was evicted through the Eviction API: no interceptor is left to handle it.", pod.Name)
		c.eventf(er, corev1.EventTypeNormal, EventEvicted, "%s", message)
		logger.V(2).Info("Evicted pod")
		// The pod's termination wakes the controller; should it never come,
		// the eviction is retried once the expectation times out.
		return evictionExpectationTimeout, c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) { status.Message = message })
	case apierrors.IsNotFound(err):
		// The pod is gone; its deletion completes the request.
		return 0, nil
	}

	result := metrics.ResultFailed
	if apierrors.IsTooManyRequests(err) {
		result = metrics.ResultBlocked
	}
	metrics.Evictions.WithLabelValues(result).Inc()
	var retryAfter time.Duration
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok {
		retryAfter = time.Duration(seconds) * time.Second
	}
	delay := c.backoff.failed(key, now, retryAfter)
	logger.V(2).Info("Eviction failed", "retryIn", delay, "err", err)
	var message string
	// The eviction was attempted: its count must not be lost to a conflict
	// with an interceptor writing the status at the same time.
	if err := c.updateStatusRetryingConflicts(ctx, er, func(status *v1alpha1.EvictionRequestStatus) {
		if status.PodEvictionStatus == nil {
			status.PodEvictionStatus = &v1alpha1.PodEvictionStatus{}
		}
		status.PodEvictionStatus.FailedAPIEvictionCounter++
		message = fmt.Sprintf("Eviction of pod %s through the Eviction API failed (%d failed attempts so far), retrying in %s: %v",
			pod.Name, status.PodEvictionStatus.FailedAPIEvictionCounter, delay, err)
		status.Message = message
	}); err != nil {
		return 0, err
	}
	c.eventf(er, corev1.EventTypeWarning, EventEvictionFailed, "%s", message)
	return delay, nil
}
