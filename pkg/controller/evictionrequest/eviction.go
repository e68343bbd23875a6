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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	"github.com/evictionrequest/apiserver/pkg/controller/evictionrequest/metrics"
)

// evict asks the Eviction API, through the shared evictor, to evict the
// pod of a request no interceptor handles any more, and records what came
// of it on the request.
func (c *Controller) evict(ctx context.Context, key string, er *v1alpha1.EvictionRequest, pod *corev1.Pod) (time.Duration, error) {
	attempt := c.evictor().Evict(ctx, key, pod, types.UID(er.Spec.Target.PodRef.UID))
	switch attempt.Result {
	case eviction.Terminating:
		// The request completes once the pod is gone.
		return 0, c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) {
			status.Message = fmt.Sprintf("Pod %s is terminating; waiting for it to be gone.", pod.Name)
		})
	case eviction.Skipped:
		return 0, c.notEvicted(ctx, er, pod, attempt)
	case eviction.NotYet:
		return attempt.RetryIn, nil
	case eviction.Gone:
		// The pod is gone; its deletion completes the request.
		return 0, nil
	case eviction.Evicted:
		metrics.Evictions.WithLabelValues(metrics.ResultSuccess).Inc()
		message := fmt.Sprintf("Pod %s was evicted through the Eviction API: no interceptor is left to handle it.", pod.Name)
		c.eventf(er, corev1.EventTypeNormal, EventEvicted, "%s", message)
		klog.FromContext(ctx).V(2).Info("Evicted pod")
		return attempt.RetryIn, c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) { status.Message = message })
	}
	return c.refused(ctx, er, pod, attempt)
}

// notEvicted says on the request, once, that its pod is one the Eviction
// API is not used for: DaemonSet pods would be recreated on the same node at
// once, and mirror pods belong to the kubelet's static pods.
func (c *Controller) notEvicted(ctx context.Context, er *v1alpha1.EvictionRequest, pod *corev1.Pod, attempt eviction.Attempt) error {
	message := fmt.Sprintf("Pod %s is a %s pod: the eviction request controller does not evict it through the Eviction API; an interceptor or its owner must terminate it.", pod.Name, attempt.Kind)
	if er.Status.Message == message {
		return nil
	}
	if err := c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) { status.Message = message }); err != nil {
		return err
	}
	c.eventf(er, corev1.EventTypeWarning, EventEvictionNotSupported, "%s", message)
	return nil
}

// refused counts a refused eviction on the request and says when it is
// tried again.
func (c *Controller) refused(ctx context.Context, er *v1alpha1.EvictionRequest, pod *corev1.Pod, attempt eviction.Attempt) (time.Duration, error) {
	result := metrics.ResultFailed
	if attempt.Blocked {
		result = metrics.ResultBlocked
	}
	metrics.Evictions.WithLabelValues(result).Inc()
	klog.FromContext(ctx).V(2).Info("Eviction failed", "retryIn", attempt.RetryIn, "err", attempt.Err)
	var message string
	// The eviction was attempted: its count must not be lost to a conflict
	// with an interceptor writing the status at the same time.
	if err := c.updateStatusRetryingConflicts(ctx, er, func(status *v1alpha1.EvictionRequestStatus) {
		if status.PodEvictionStatus == nil {
			status.PodEvictionStatus = &v1alpha1.PodEvictionStatus{}
		}
		status.PodEvictionStatus.FailedAPIEvictionCounter++
		message = fmt.Sprintf("Eviction of pod %s through the Eviction API failed (%d failed attempts so far), retrying in %s: %v",
			pod.Name, status.PodEvictionStatus.FailedAPIEvictionCounter, attempt.RetryIn, attempt.Err)
		status.Message = message
	}); err != nil {
		return 0, err
	}
	c.eventf(er, corev1.EventTypeWarning, EventEvictionFailed, "%s", message)
	return attempt.RetryIn, nil
}
