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

package coordination

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	"github.com/evictionrequest/apiserver/pkg/util/podlookup"
)

// sync brings the EvictionRequest key one step forward and returns when it
// must be looked at again even if nothing changes: at the heartbeat deadline
// of the active interceptor, or when the eviction backoff ends.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	er, err := c.erLister.EvictionRequests(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.forget(key)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if coordinationutil.IsComplete(er) || er.Spec.Target.PodRef == nil {
		c.forget(key)
		return 0, nil
	}
	logger = klog.LoggerWithValues(logger, "evictionRequest", klog.KObj(er), "pod", klog.KRef(namespace, er.Spec.Target.PodRef.Name))
	ctx = klog.NewContext(ctx, logger)

	pod, err := c.getPod(ctx, namespace, er.Spec.Target.PodRef)
	if err != nil {
		return 0, err
	}
	if reason, message := completion(er, pod); reason != "" {
		return 0, c.complete(ctx, er, reason, message)
	}
	return c.progress(ctx, key, er, pod)
}

// getPod returns the target pod, or nil when it no longer exists
// (podlookup.Get, the live read bounded by the call timeout).
func (c *Controller) getPod(ctx context.Context, namespace string, podRef *v1alpha1.LocalPodReference) (*corev1.Pod, error) {
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	return podlookup.Get(callCtx, c.podLister, c.kubeClient.CoreV1(), namespace, podRef.Name, types.UID(podRef.UID))
}

// completion returns why the request is complete, if it is: its pod is gone
// or replaced, its pod terminated, or every requester withdrew while
// cancellation is allowed.
func completion(er *v1alpha1.EvictionRequest, pod *corev1.Pod) (reason, message string) {
	podRef := er.Spec.Target.PodRef
	switch ending, message := eviction.Ended(pod, podRef.Name, types.UID(podRef.UID)); ending {
	case eviction.PodDeleted:
		return v1alpha1.CompleteReasonPodDeleted, message
	case eviction.PodTerminal:
		return v1alpha1.CompleteReasonPodTerminated, message
	}
	if len(er.Spec.Requesters) == 0 && !coordinationutil.CancellationForbidden(er) {
		return v1alpha1.CompleteReasonCanceled, "Every requester withdrew; the eviction request is canceled."
	}
	return "", ""
}

// complete sets Complete=True and clears the fields of the active interceptor.
func (c *Controller) complete(ctx context.Context, er *v1alpha1.EvictionRequest, reason, message string) error {
	now := metav1.NewTime(c.clock.Now())
	err := c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) {
		apimeta.SetStatusCondition(&status.Conditions, coordinationutil.NewCompleteCondition(er, reason, message, now))
		status.ActiveInterceptorName = nil
		status.ActiveInterceptorCompleted = false
		status.ExpectedInterceptorFinishTime = nil
		status.Message = message
	})
	if err != nil {
		return err
	}
	c.forget(er.Namespace + "/" + er.Name)
	metrics.RequestDuration.WithLabelValues(reason).Observe(now.Sub(er.CreationTimestamp.Time).Seconds())
	eventReason := EventCompleted
	if reason == v1alpha1.CompleteReasonCanceled {
		eventReason = EventCanceled
	}
	c.eventf(er, corev1.EventTypeNormal, eventReason, "%s", message)
	klog.FromContext(ctx).V(2).Info("EvictionRequest completed", "reason", reason)
	return nil
}

// progress moves a request that is not complete: it selects the first
// interceptor, hands over to the next one when the active one completed or
// missed its deadline, waits for an interceptor within its deadline, and
// evicts the pod when no interceptor is left.
func (c *Controller) progress(ctx context.Context, key string, er *v1alpha1.EvictionRequest, pod *corev1.Pod) (time.Duration, error) {
	now := c.clock.Now()
	order := coordinationutil.InterceptorOrder(er)
	active := coordinationutil.ActiveInterceptor(er)
	if active == "" && len(order) > 0 {
		return c.selectFirst(ctx, er, order, now)
	}
	deadline := coordinationutil.HeartbeatDeadline(er)
	end := eviction.Judge(er.Status.ActiveInterceptorCompleted, deadline, now)
	if !coordinationutil.AtEvictionStep(er, now) {
		if end == eviction.Waiting {
			// The interceptor is within its deadline: wait for it. A heartbeat
			// that moved the deadline cancels a pending eviction.
			c.backoff.Forget(key)
			return deadline.Sub(now), nil
		}
		next, _ := eviction.Next(order, active)
		return c.handOff(ctx, er, active, next, end, deadline, now)
	}
	// Counted and reported once per missed deadline; one missed before this
	// leadership term was the previous leader's.
	if active != "" && end == eviction.TimedOut && !deadline.Before(c.since) && c.lastTurns.first(key, deadline) {
		metrics.InterceptorTimeouts.Inc()
		c.eventf(er, corev1.EventTypeWarning, EventInterceptorTimedOut, "%s The pod is evicted through the Eviction API.",
			eviction.LastTurnMessage(interceptorRole, active, end.Why(coordinationutil.HeartbeatDeadlineDuration(er), deadline)))
	}
	return c.evict(ctx, key, er, pod)
}

// interceptorRole names an interceptor in the messages of its turns.
const interceptorRole = "Interceptor"

// selectFirst makes the first interceptor of order active.
func (c *Controller) selectFirst(ctx context.Context, er *v1alpha1.EvictionRequest, order []string, now time.Time) (time.Duration, error) {
	first, _ := eviction.Next(order, "")
	message := fmt.Sprintf("Interceptor %s is active: it has the highest index of %d interceptors.", first, len(order))
	if err := c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) {
		status.ActiveInterceptorName = ptr.To(first)
		status.ActiveInterceptorCompleted = false
		status.ExpectedInterceptorFinishTime = nil
		status.Message = message
	}); err != nil {
		return 0, err
	}
	c.eventf(er, corev1.EventTypeNormal, EventInterceptorSelected, "%s", message)
	// No heartbeat yet: the deadline counts from the creation of the request.
	return eviction.UntilOrNow(coordinationutil.HeartbeatDeadline(er), now), nil
}

// handOff makes next the active interceptor after active, whose turn ended.
func (c *Controller) handOff(ctx context.Context, er *v1alpha1.EvictionRequest, active, next string, end eviction.TurnEnd, deadline, now time.Time) (time.Duration, error) {
	heartbeatDeadline := coordinationutil.HeartbeatDeadlineDuration(er)
	reason := EventInterceptorHandedOff
	if end == eviction.TimedOut {
		reason = EventInterceptorTimedOut
	}
	message := eviction.HandOffMessage(interceptorRole, next, active, end.Why(heartbeatDeadline, deadline))
	if err := c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) {
		status.ActiveInterceptorName = ptr.To(next)
		status.ActiveInterceptorCompleted = false
		status.HeartbeatTime = ptr.To(metav1.NewTime(now))
		status.ExpectedInterceptorFinishTime = nil
		status.Message = message
	}); err != nil {
		return 0, err
	}
	c.eventf(er, end.EventType(), reason, "%s", message)
	if end == eviction.TimedOut {
		metrics.InterceptorTimeouts.Inc()
	}
	return heartbeatDeadline, nil
}

// updateStatus writes the status mutate makes of a copy of er, unless it is
// unchanged. The write carries er's resourceVersion: a conflict means a newer
// object is on its way to the cache, and the sync is retried with it.
func (c *Controller) updateStatus(ctx context.Context, er *v1alpha1.EvictionRequest, mutate func(*v1alpha1.EvictionRequestStatus)) error {
	updated := er.DeepCopy()
	mutate(&updated.Status)
	if apiequality.Semantic.DeepEqual(er.Status, updated.Status) {
		return nil
	}
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	_, err := c.erClient.EvictionRequests(er.Namespace).UpdateStatus(callCtx, updated, metav1.UpdateOptions{FieldManager: ControllerName})
	return err
}

// updateStatusRetryingConflicts is updateStatus for changes that record
// something already done: on a conflict it applies mutate again to the
// latest object instead of leaving it to the next sync.
func (c *Controller) updateStatusRetryingConflicts(ctx context.Context, er *v1alpha1.EvictionRequest, mutate func(*v1alpha1.EvictionRequestStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := c.updateStatus(ctx, er, mutate)
		if apierrors.IsConflict(err) {
			callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
			latest, getErr := c.erClient.EvictionRequests(er.Namespace).Get(callCtx, er.Name, metav1.GetOptions{})
			cancel()
			if getErr != nil {
				return getErr
			}
			er = latest
		}
		return err
	})
}
