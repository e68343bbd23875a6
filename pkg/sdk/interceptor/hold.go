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

package interceptor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	erutil "github.com/evictionrequest/apiserver/pkg/api/v1alpha1/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// writeAttempts bounds how often a status write is retried after conflicts
// with the controller's and other writers' updates.
const writeAttempts = 5

// hold is the interceptor's turn on one EvictionRequest: the Handler, the
// heartbeats and the final write, under a context that ends when the
// interceptor loses the request.
type hold struct {
	t      *term
	key    string
	ctx    context.Context
	cancel context.CancelFunc
	// termCtx is the context of the term: the final write uses it, so that
	// the echo of that very write in the cache, which ends the hold, does
	// not cancel the call that made it.
	termCtx context.Context
	logger  klog.Logger

	progress progressState

	// writeMu serializes the status writes of the heartbeat loop and the
	// Handler's Report calls.
	writeMu sync.Mutex
	mu      sync.Mutex
	// latest is the newest version of the request seen in the cache or in
	// the answer to a write.
	latest *v1alpha1.EvictionRequest
	// found is the request as the interceptor found it, before its first
	// heartbeat: what a resumed Handler sees of the previous run.
	found *v1alpha1.EvictionRequest
}

func newHold(parent context.Context, t *term, key string, er *v1alpha1.EvictionRequest) *hold {
	logger := klog.LoggerWithValues(klog.FromContext(parent), "evictionRequest", key, "pod", klog.KRef(er.Namespace, er.Spec.Target.PodRef.Name))
	ctx, cancel := context.WithCancel(klog.NewContext(parent, logger))
	return &hold{t: t, key: key, ctx: ctx, cancel: cancel, termCtx: parent, logger: logger, latest: er, found: er}
}

func (h *hold) observe(er *v1alpha1.EvictionRequest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.latest = er
}

func (h *hold) current() *v1alpha1.EvictionRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.latest
}

// lose ends the hold: the Handler's context is canceled at once.
func (h *hold) lose(why string) {
	if h.ctx.Err() == nil {
		h.logger.V(2).Info("Lost the EvictionRequest, canceling the handler", "reason", why)
	}
	h.cancel()
}

func (h *hold) setProgress(p Progress) {
	h.progress.set(p)
}

// Report is the Reporter of the hold's Request: a changed progress is
// written with a heartbeat at once, the same one again is left to the
// heartbeats.
func (h *hold) Report(ctx context.Context, p Progress) error {
	if !h.progress.set(p) {
		if h.ctx.Err() != nil {
			return ErrLost
		}
		return nil
	}
	return h.heartbeat(ctx)
}

// run is the goroutine of a hold.
func (h *hold) run() {
	how := endLost
	defer func() {
		h.cancel()
		h.t.released(h, how)
	}()
	er := h.current()
	pod := er.Namespace + "/" + er.Spec.Target.PodRef.Name
	if er.Spec.Type != "" && er.Spec.Type != v1alpha1.Soft {
		if h.finish(Decline("Interceptor %s does not support eviction requests of type %s.", h.t.cfg.Name, er.Spec.Type)) == nil {
			how = endPassedOn
		}
		return
	}

	// The first heartbeat adopts the request, and proves it is still ours.
	h.setProgress(Progress{Message: fmt.Sprintf("Interceptor %s is working on the eviction of pod %s.", h.t.cfg.Name, pod)})
	if err := h.heartbeat(h.ctx); err != nil {
		if !errors.Is(err, ErrLost) && h.ctx.Err() == nil {
			how = endFailed
		}
		h.logError(err, "Cannot take the EvictionRequest")
		return
	}
	h.logger.V(2).Info("Took the EvictionRequest")
	h.t.recorder.Eventf(er, corev1.EventTypeNormal, EventStarted, "Interceptor %s started working on the eviction of pod %s.", h.t.cfg.Name, pod)

	stopHeartbeats := h.startHeartbeats()
	result, err := h.handleUntilDone()
	stopHeartbeats()
	if h.ctx.Err() != nil {
		// Lost, or the interceptor stops: nothing to write.
		return
	}
	if err != nil {
		how = endFailed
		h.logger.Error(err, "Handler failed; retrying with backoff")
		h.t.recorder.Eventf(h.current(), corev1.EventTypeWarning, EventFailed, "Interceptor %s failed: %v", h.t.cfg.Name, err)
		return
	}
	switch result.Outcome {
	case Completed, Declined:
		switch err := h.finish(result); {
		case err == nil:
			how = endPassedOn
		case !errors.Is(err, ErrLost):
			how = endFailed
			h.logError(err, "Cannot pass the EvictionRequest on")
		}
	case PodTerminated:
		h.setProgress(Progress{Message: result.Message})
		h.t.recorder.Eventf(h.current(), corev1.EventTypeNormal, EventPodTerminated, "%s", result.Message)
		// The controller completes the request once the pod is gone, and
		// the hold ends with it; until then the interceptor keeps it. A
		// heartbeat that fails for a moment is retried by the next tick.
		if err := h.heartbeat(h.ctx); errors.Is(err, ErrLost) {
			return
		} else if err != nil {
			h.logError(err, "Heartbeat failed")
		}
		stop := h.startHeartbeats()
		<-h.ctx.Done()
		stop()
	default:
		how = endFailed
		h.logger.Error(nil, "Handler returned no outcome; retrying with backoff", "outcome", result.Outcome)
	}
}

// handleUntilDone runs the Handler, and again after each Requeue result,
// until it returns an outcome or an error, or the hold ends.
func (h *hold) handleUntilDone() (Result, error) {
	req := NewRequest(h.found.DeepCopy(), h)
	for {
		result, err := h.handle(req)
		if err != nil || result.Outcome != 0 || result.RequeueAfter <= 0 {
			return result, err
		}
		select {
		case <-h.ctx.Done():
			return Result{}, h.ctx.Err()
		case <-h.t.cfg.Clock.After(result.RequeueAfter):
		}
	}
}

// handle runs the Handler once, turning a panic into an error.
func (h *hold) handle(req *Request) (result Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return h.t.cfg.Handler(h.ctx, req)
}

// startHeartbeats heartbeats every period until the returned function is
// called or the hold ends.
func (h *hold) startHeartbeats() (stop func()) {
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	ticker := h.t.cfg.Clock.NewTicker(h.period())
	go func() {
		defer close(done)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C():
			}
			if err := h.heartbeat(ctx); err != nil && ctx.Err() == nil {
				h.logError(err, "Heartbeat failed")
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// period is how often the hold heartbeats: Config.HeartbeatPeriod, or a
// tenth of the request's heartbeat deadline, and at most half of it.
func (h *hold) period() time.Duration {
	deadline := erutil.HeartbeatDeadlineDuration(h.current())
	period := h.t.cfg.HeartbeatPeriod
	switch {
	case period <= 0:
		period = deadline / 10
	case period > deadline/2:
		period = deadline / 2
	}
	return period
}

// heartbeat writes the heartbeat time and the latest progress.
func (h *hold) heartbeat(ctx context.Context) error {
	progress := h.progress.get()
	now := metav1.NewTime(h.t.cfg.Clock.Now())
	return h.writeStatus(ctx, func(s *v1alpha1.EvictionRequestStatus) {
		s.HeartbeatTime = &now
		if progress.Message != "" {
			s.Message = progress.Message
		}
		s.ExpectedInterceptorFinishTime = nil
		if progress.ExpectedFinishTime != nil {
			s.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(*progress.ExpectedFinishTime))
		}
		if progress.CancellationPolicy != "" {
			s.EvictionRequestCancellationPolicy = ptr.To(progress.CancellationPolicy)
		}
	})
}

// finish ends the interceptor's turn: status.activeInterceptorCompleted is
// set, and the controller passes the request to the next interceptor.
func (h *hold) finish(result Result) error {
	now := metav1.NewTime(h.t.cfg.Clock.Now())
	err := h.writeStatus(h.termCtx, func(s *v1alpha1.EvictionRequestStatus) {
		s.ActiveInterceptorCompleted = true
		s.HeartbeatTime = &now
		s.ExpectedInterceptorFinishTime = nil
		if result.Message != "" {
			s.Message = result.Message
		}
	})
	if err != nil {
		return err
	}
	reason := EventCompleted
	if result.Outcome == Declined {
		reason = EventDeclined
	}
	h.logger.V(2).Info("Passed the EvictionRequest on", "outcome", result.Outcome, "message", result.Message)
	h.t.recorder.Eventf(h.current(), corev1.EventTypeNormal, reason, "%s", result.Message)
	return nil
}

// writeStatus writes what mutate makes of the latest request through
// /status, as long as the interceptor holds it. A conflict rereads the
// request and tries again; a request that is no longer ours ends the hold
// with ErrLost.
func (h *hold) writeStatus(ctx context.Context, mutate func(*v1alpha1.EvictionRequestStatus)) error {
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	client := h.t.cfg.Client.CoordinationV1alpha1().EvictionRequests(h.current().Namespace)
	er := h.current()
	var err error
	for range writeAttempts {
		if h.ctx.Err() != nil {
			return ErrLost
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !h.t.owns(er) {
			h.lose(lossReason(er, h.t.cfg.Name))
			return ErrLost
		}
		updated := er.DeepCopy()
		mutate(&updated.Status)
		callCtx, cancel := context.WithTimeout(ctx, h.t.cfg.CallTimeout)
		var written *v1alpha1.EvictionRequest
		written, err = client.UpdateStatus(callCtx, updated, metav1.UpdateOptions{FieldManager: h.t.cfg.Name})
		cancel()
		switch {
		case err == nil:
			h.observe(written)
			return nil
		case apierrors.IsNotFound(err):
			h.lose("the request was deleted")
			return ErrLost
		case !apierrors.IsConflict(err):
			return err
		}
		callCtx, cancel = context.WithTimeout(ctx, h.t.cfg.CallTimeout)
		er, err = client.Get(callCtx, er.Name, metav1.GetOptions{})
		cancel()
		if apierrors.IsNotFound(err) {
			h.lose("the request was deleted")
			return ErrLost
		}
		if err != nil {
			return err
		}
		h.observe(er)
	}
	return err
}

func (h *hold) logError(err error, msg string) {
	if errors.Is(err, ErrLost) || h.ctx.Err() != nil {
		return
	}
	h.logger.Error(err, msg)
}
