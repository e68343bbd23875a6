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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
)

// wording names the controller in the messages of its evictions.
var wording = eviction.Wording{Evictor: "the eviction request controller", Instead: "an interceptor"}

// evict asks the Eviction API, through the shared evictor, to evict the
// pod of a request no interceptor handles any more, and records what came
// of it on the request.
func (c *Controller) evict(ctx context.Context, key string, er *v1alpha1.EvictionRequest, pod *corev1.Pod) (time.Duration, error) {
	attempt := c.evictor().Evict(ctx, key, pod, types.UID(er.Spec.Target.PodRef.UID))
	switch attempt.Result {
	case eviction.NotYet:
		return attempt.RetryIn, nil
	case eviction.Gone:
		// The pod is gone; its deletion completes the request.
		return 0, nil
	case eviction.Refused:
		return c.refused(ctx, er, pod, attempt)
	}
	outcome := attempt.Outcome(pod.Name, coordinationutil.FailedEvictions(er), wording)
	c.count(ctx, outcome)
	if attempt.Result == eviction.Evicted {
		// The pod's termination says it (EvictedMessageDelay).
		c.event(er, outcome)
		return attempt.RetryIn, nil
	}
	if er.Status.Message == outcome.Message {
		// Said already: a DaemonSet pod is looked at again on every change.
		return attempt.RetryIn, nil
	}
	if wait := untilEvictedMessage(attempt); wait > 0 {
		return wait, nil
	}
	if err := c.updateStatus(ctx, er, func(status *v1alpha1.EvictionRequestStatus) { status.Message = outcome.Message }); err != nil {
		return 0, err
	}
	c.event(er, outcome)
	return attempt.RetryIn, nil
}

// EvictedMessageDelay is how long a pod the controller evicted may take to
// go before its request says that it is terminating. A pod gone sooner
// completes its request in one status write instead of two, as kcm's Job
// controller batches the pod updates of a second into one status write
// (its syncJobBatchPeriod); the Evicted event is recorded at once.
const EvictedMessageDelay = time.Second

// untilEvictedMessage is how long the request of a pod an eviction started
// terminating waits before it says so, zero for any other attempt: timed on
// the controller's clock from the grant, or, for a pod someone else
// evicted or a leader that did not grant it, from the first sync that saw
// the pod terminating.
func untilEvictedMessage(attempt eviction.Attempt) time.Duration {
	if attempt.Result != eviction.Terminating || !attempt.Granted {
		return 0
	}
	return max(EvictedMessageDelay-attempt.TerminatingFor, 0)
}

// refused counts a refused eviction on the request and says when it is
// tried again.
func (c *Controller) refused(ctx context.Context, er *v1alpha1.EvictionRequest, pod *corev1.Pod, attempt eviction.Attempt) (time.Duration, error) {
	var outcome eviction.Outcome
	// The eviction was attempted: its count must not be lost to a conflict
	// with an interceptor writing the status at the same time.
	if err := c.updateStatusRetryingConflicts(ctx, er, func(status *v1alpha1.EvictionRequestStatus) {
		if status.PodEvictionStatus == nil {
			status.PodEvictionStatus = &v1alpha1.PodEvictionStatus{}
		}
		status.PodEvictionStatus.FailedAPIEvictionCounter++
		outcome = attempt.Outcome(pod.Name, status.PodEvictionStatus.FailedAPIEvictionCounter, wording)
		status.Message = outcome.Message
	}); err != nil {
		return 0, err
	}
	c.count(ctx, outcome)
	c.event(er, outcome)
	return attempt.RetryIn, nil
}

// count counts an attempt that reached the Eviction API.
func (c *Controller) count(ctx context.Context, outcome eviction.Outcome) {
	if outcome.Result != "" {
		metrics.Evictions.WithLabelValues(outcome.Result).Inc()
		klog.FromContext(ctx).V(2).Info("Eviction attempted", "result", outcome.Result, "message", outcome.Message)
	}
}

// event records the event of an attempt's outcome on the request.
func (c *Controller) event(er *v1alpha1.EvictionRequest, outcome eviction.Outcome) {
	if outcome.EventReason != "" {
		c.eventf(er, outcome.EventType, outcome.EventReason, "%s", outcome.Message)
	}
}
