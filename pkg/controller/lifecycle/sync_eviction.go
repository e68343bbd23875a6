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

package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	"k8s.io/klog/v2"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
)

// syncEviction brings the status of the Eviction key one step forward and
// returns when it must be looked at again even if nothing changes.
func (c *Controller) syncEviction(ctx context.Context, key string) (time.Duration, error) {
	ev, err := c.latestEviction(key)
	if err != nil || ev == nil {
		return 0, err
	}
	namespace := ev.Namespace
	// A finished Eviction stays as it is: its conditions cannot be
	// reverted, and a new intent gets a new Eviction.
	if lifecycleutil.IsFinished(ev) {
		return 0, nil
	}
	var pod *corev1.Pod
	if ref := ev.Spec.Target.Pod; ref != nil {
		logger := klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KRef(namespace, ref.Name))
		ctx = klog.NewContext(ctx, logger)
		if pod, err = c.podLister.Pods(namespace).Get(ref.Name); err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	target := lifecycleutil.EvictionTargetKey(ev)
	credible, err := c.credibleEvictions(ctx, c.evictionsOf(target))
	if err != nil {
		return 0, err
	}
	relevant, _ := lifecycleutil.RelevantEviction(credible)
	duplicate := relevant != nil && relevant.UID != ev.UID && !lifecycleutil.IsFinished(relevant)
	d := c.decide(c.clock.Now(), ev, pod, c.requestsOf(target), duplicate)
	if apiequality.Semantic.DeepEqual(ownedStatus(ev.Status), d.status) {
		return d.resync, nil
	}
	applied, err := c.applyStatus(ctx, ev, d.status)
	if err != nil {
		return 0, err
	}
	c.written.Mutation(applied)
	logger := klog.FromContext(ctx)
	for _, e := range d.events {
		c.recorder.Event(ev, e.eventType, e.reason, e.message)
		logger.V(2).Info("Eviction progressed", "reason", e.reason, "message", e.message)
		if e.reason == EventResponderTimedOut {
			metrics.ResponderTimeouts.Inc()
		}
	}
	countTurns(ev.Status.TargetResponders, d.status.TargetResponders)
	observeEnd(c.clock.Now(), ev, d.status)
	return d.resync, nil
}

// observeEnd observes the duration of ev when status, just written, ends it.
func observeEnd(now time.Time, ev *lifecyclev1alpha1.Eviction, status lifecyclev1alpha1.EvictionStatus) {
	after := &lifecyclev1alpha1.Eviction{Status: status}
	if lifecycleutil.IsFinished(ev) || !lifecycleutil.IsFinished(after) {
		return
	}
	result := metrics.ResultEvictionFailed
	if lifecycleutil.IsEvicted(after) {
		result = metrics.ResultEvicted
	}
	metrics.EvictionDuration.WithLabelValues(result).Observe(now.Sub(ev.CreationTimestamp.Time).Seconds())
}

// ownedStatus is the part of status the controller writes, for comparing
// with a decision: its conditions, requesters, target responders, and the
// names and start times of the responders' entries.
func ownedStatus(status lifecyclev1alpha1.EvictionStatus) lifecyclev1alpha1.EvictionStatus {
	owned := lifecyclev1alpha1.EvictionStatus{
		ObservedGeneration: status.ObservedGeneration,
		Requesters:         status.Requesters,
		TargetResponders:   slices.Clone(status.TargetResponders),
		Conditions:         ownedConditions(status.Conditions),
	}
	for _, r := range status.Responders {
		owned.Responders = append(owned.Responders, lifecyclev1alpha1.ResponderStatus{Name: r.Name, StartTime: r.StartTime})
	}
	lifecycleutil.ResponderOrder(owned.TargetResponders)
	return owned
}

// applyStatus writes status with server-side apply, as the controller's
// field manager: the fields of a responder's entry that the controller does
// not set stay the responder's.
func (c *Controller) applyStatus(ctx context.Context, ev *lifecyclev1alpha1.Eviction, status lifecyclev1alpha1.EvictionStatus) (*lifecyclev1alpha1.Eviction, error) {
	if err := c.takeOverEviction(ctx, ev); err != nil {
		return nil, err
	}
	apply := lifecycleapply.EvictionStatus().WithObservedGeneration(*status.ObservedGeneration).WithConditions(conditionsApply(status.Conditions)...)
	for _, r := range status.Requesters {
		apply.WithRequesters(lifecycleapply.Requester().WithName(r.Name).WithIntent(r.Intent))
	}
	for _, r := range status.TargetResponders {
		apply.WithTargetResponders(lifecycleapply.TargetResponder().WithName(r.Name).WithPriority(*r.Priority).WithState(r.State))
	}
	for _, r := range status.Responders {
		entry := lifecycleapply.ResponderStatus().WithName(r.Name)
		if r.StartTime != nil {
			entry.WithStartTime(*r.StartTime)
		}
		apply.WithResponders(entry)
	}
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	return c.client.LifecycleV1alpha1().Evictions(ev.Namespace).ApplyStatus(callCtx,
		lifecycleapply.Eviction(ev.Name, ev.Namespace).WithStatus(apply),
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
}

// latestEviction is the Eviction key as the cache has it, or as the
// controller last wrote it when the cache has not caught up; nil when it
// is gone.
func (c *Controller) latestEviction(key string) (*lifecyclev1alpha1.Eviction, error) {
	obj, exists, err := c.written.GetByKey(key)
	if err != nil || !exists {
		return nil, err
	}
	ev, ok := obj.(*lifecyclev1alpha1.Eviction)
	if !ok {
		return nil, fmt.Errorf("cache holds %T for Eviction %s", obj, key)
	}
	return ev, nil
}

// countTurns counts the turns that ended between two versions of the
// target responders.
func countTurns(before, after []lifecyclev1alpha1.TargetResponder) {
	for _, r := range after {
		old := lifecycleutil.TargetResponderIn(before, r.Name)
		if ended(r.State) && (old == nil || !ended(old.State)) {
			metrics.ResponderTurns.WithLabelValues(string(r.State)).Inc()
		}
	}
}
