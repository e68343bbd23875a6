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

package evictor

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/takeover"
)

// report is what one sync has to say in the evictor's entry of the
// Eviction, and the event to record with it.
type report struct {
	message  string
	expected *time.Time
	complete bool
	event    *event
	// retryIn is when the next attempt may be made.
	retryIn time.Duration
	// evicted is true when the Eviction API granted an eviction just now:
	// its event is recorded though the message stays.
	evicted bool
	// eventMessage is the event's message.
	eventMessage string
}

type event struct {
	eventType, reason string
}

// sync takes the evictor's turn on the Eviction key one step: it completes
// the turn of a pod that is gone or terminal, and otherwise evicts the pod
// or waits for it, heartbeating. It returns when to look again.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	ev, err := c.evictionLister.Evictions(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ref := ev.Spec.Target.Pod
	status := lifecycleutil.ResponderStatus(ev, Name)
	if ref == nil || !lifecycleutil.IsHeldBy(ev, Name) || status == nil || status.StartTime == nil {
		// Not the evictor's turn; or it is, but the controller has not
		// written its start yet.
		if ref != nil && lifecycleutil.IsFinished(ev) {
			c.evictor.Backoff.Forget(string(ref.UID))
		}
		return 0, nil
	}
	ctx = klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KRef(namespace, ref.Name)))
	pod, err := c.podLister.Pods(namespace).Get(ref.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	r := c.attempt(ctx, ev, pod, ptr.Deref(status.Message, ""))
	now := c.clock.Now()
	heartbeatDue := lastHeartbeat(status).Add(HeartbeatInterval)
	changed := r.message != ptr.Deref(status.Message, "")
	if r.complete || changed || !now.Before(heartbeatDue) {
		if err := c.write(ctx, ev, status, r, now); err != nil {
			return 0, err
		}
		heartbeatDue = now.Add(HeartbeatInterval)
	}
	if r.event != nil && (changed || r.evicted) {
		c.recorder.Event(ev, r.event.eventType, r.event.reason, r.eventMessage)
	}
	if r.complete {
		c.evictor.Backoff.Forget(string(ref.UID))
		return 0, nil
	}
	next := heartbeatDue.Sub(now)
	if r.retryIn > 0 && r.retryIn < next {
		next = r.retryIn
	}
	return next, nil
}

// wording names the evictor in the messages of its evictions.
var wording = eviction.Wording{Evictor: "the evictor", Instead: "another responder"}

// attempt decides what the evictor does about pod (the pod of the target's
// name, nil when there is none) and what it reports; last is its message
// so far, which counts the failed attempts across restarts.
func (c *Controller) attempt(ctx context.Context, ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod, last string) report {
	ref := ev.Spec.Target.Pod
	if ending, _ := eviction.Ended(pod, ref.Name, ref.UID); ending != "" {
		return report{message: endedMessage(ref.Name, ref.UID, pod), complete: true}
	}
	a := c.evictor.Evict(ctx, string(ref.UID), pod, ref.UID)
	if a.Result == eviction.NotYet {
		return report{message: last, retryIn: a.RetryIn}
	}
	attempts := policyutil.ParseAttempts(last) + 1
	outcome := a.Outcome(pod.Name, attempts, wording)
	r := report{message: attemptMessage(a, pod, attempts, last), retryIn: a.RetryIn}
	r.eventMessage = r.message
	if a.Result == eviction.Evicted {
		// The pod's termination wakes the evictor a moment later, and that
		// sync says the eviction started it: one status write, not two.
		r.message, r.evicted = last, true
	}
	switch a.Result {
	case eviction.Terminating:
		r.expected = ptr.To(pod.DeletionTimestamp.Time)
	case eviction.Gone:
		r.complete = true
	}
	if outcome.EventReason != "" {
		r.event = &event{outcome.EventType, outcome.EventReason}
	}
	if outcome.Result != "" {
		metrics.EvictorEvictions.WithLabelValues(outcome.Result).Inc()
		klog.FromContext(ctx).V(2).Info("Eviction attempted", "result", outcome.Result, "message", outcome.Message)
	}
	return r
}

// lastHeartbeat is when the evictor last heartbeat, or when its turn began.
func lastHeartbeat(status *lifecyclev1alpha1.ResponderStatus) time.Time {
	if status.HeartbeatTime != nil {
		return status.HeartbeatTime.Time
	}
	return status.StartTime.Time
}

// write applies the evictor's entry: r's message, expected and completion
// times, and a heartbeat unless the last one is less than 20 seconds old.
// Every field the evictor wrote before is in the apply: one left out would
// be removed.
func (c *Controller) write(ctx context.Context, ev *lifecyclev1alpha1.Eviction, status *lifecyclev1alpha1.ResponderStatus, r report, now time.Time) error {
	entry := lifecycleapply.ResponderStatus().WithName(Name).WithStartTime(*status.StartTime).
		WithMessage(lifecycleutil.ResponderMessage(r.message)).WithHeartbeatTime(lifecycleutil.NextHeartbeat(status.HeartbeatTime, now))
	if r.expected != nil {
		entry.WithExpectedCompletionTime(lifecycleutil.ExpectedCompletion(*r.expected, now))
	}
	if r.complete {
		// As upstream's evictor: the turn ended now, as expected.
		entry.WithExpectedCompletionTime(metav1.NewTime(now)).WithCompletionTime(metav1.NewTime(now))
	}
	if err := takeover.TakeOver(ctx, ev, ManagersTakenOver, FieldManager,
		takeover.Eviction(c.client.LifecycleV1alpha1(), ev.Namespace, ev.Name, FieldManager, c.callTimeout)); err != nil {
		return err
	}
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	_, err := c.client.LifecycleV1alpha1().Evictions(ev.Namespace).ApplyStatus(callCtx,
		lifecycleapply.Eviction(ev.Name, ev.Namespace).WithStatus(lifecycleapply.EvictionStatus().WithResponders(entry)),
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}
