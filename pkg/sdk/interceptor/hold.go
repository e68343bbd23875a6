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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// writeAttempts bounds how often a status write is retried after conflicts
// with the controller's and other writers' updates.
const writeAttempts = 5

// hold is the interceptor's turn on one request: the Handler, the
// heartbeats and the final write, under a context that ends when the
// interceptor loses the request.
type hold[T object] struct {
	t      *term[T]
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
	latest T
	// found is the request as the interceptor found it, before its first
	// heartbeat: what a resumed Handler sees of the previous run.
	found T
}

func newHold[T object](parent context.Context, t *term[T], key string, obj T) *hold[T] {
	pod := t.api.pod(obj)
	logger := klog.LoggerWithValues(klog.FromContext(parent), "object", key, "pod", klog.KRef(pod.Namespace, pod.Name))
	ctx, cancel := context.WithCancel(klog.NewContext(parent, logger))
	return &hold[T]{t: t, key: key, ctx: ctx, cancel: cancel, termCtx: parent, logger: logger, latest: obj, found: obj}
}

func (h *hold[T]) observe(obj T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.latest = obj
}

func (h *hold[T]) current() T {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.latest
}

// lose ends the hold: the Handler's context is canceled at once.
func (h *hold[T]) lose(why string) {
	if h.ctx.Err() == nil {
		h.logger.V(2).Info("Lost the request, canceling the handler", "reason", why)
	}
	h.cancel()
}

func (h *hold[T]) setProgress(p Progress) {
	h.progress.set(p)
}

// Report is the Reporter of the hold's Request: a changed progress is
// written with a heartbeat at once, the same one again is left to the
// heartbeats.
func (h *hold[T]) Report(ctx context.Context, p Progress) error {
	if !h.progress.set(p) {
		if h.ctx.Err() != nil {
			return ErrLost
		}
		return nil
	}
	return h.heartbeat(ctx)
}

// run is the goroutine of a hold.
func (h *hold[T]) run() {
	how := endLost
	defer func() {
		h.cancel()
		h.t.released(h, how)
	}()
	obj := h.current()
	pod := h.t.api.pod(obj).String()
	if why := h.t.api.declines(obj); why != "" {
		if h.finish(Decline("%s", why)) == nil {
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
		h.logError(err, "Cannot take the request")
		return
	}
	h.logger.V(2).Info("Took the request")
	h.t.recorder.Eventf(obj, corev1.EventTypeNormal, EventStarted, "Interceptor %s started working on the eviction of pod %s.", h.t.cfg.Name, pod)

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
	how = h.end(result)
}

// end ends the turn as the Handler's result says.
func (h *hold[T]) end(result Result) ending {
	switch result.Outcome {
	case Completed, Declined:
		switch err := h.finish(result); {
		case err == nil:
			return endPassedOn
		case !errors.Is(err, ErrLost):
			h.logError(err, "Cannot pass the request on")
			return endFailed
		}
		return endLost
	case PodTerminated:
		h.t.recorder.Eventf(h.current(), corev1.EventTypeNormal, EventPodTerminated, "%s", result.Message)
		if h.t.api.terminationEndsTurn() {
			return h.end(Result{Outcome: Completed, Message: result.Message})
		}
		h.setProgress(Progress{Message: result.Message})
		// The controller ends the request once the pod is gone, and the
		// hold ends with it; until then the interceptor keeps it. A
		// heartbeat that fails for a moment is retried by the next tick.
		if err := h.heartbeat(h.ctx); errors.Is(err, ErrLost) {
			return endLost
		} else if err != nil {
			h.logError(err, "Heartbeat failed")
		}
		stop := h.startHeartbeats()
		<-h.ctx.Done()
		stop()
		return endLost
	}
	h.logger.Error(nil, "Handler returned no outcome; retrying with backoff", "outcome", result.Outcome)
	return endFailed
}

// handleUntilDone runs the Handler, and again after each Requeue result,
// until it returns an outcome or an error, or the hold ends.
func (h *hold[T]) handleUntilDone() (Result, error) {
	req := h.t.api.request(h.found.DeepCopyObject().(T), h)
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
func (h *hold[T]) handle(req *Request) (result Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return h.t.cfg.Handler(h.ctx, req)
}

// startHeartbeats heartbeats every period until the returned function is
// called or the hold ends.
func (h *hold[T]) startHeartbeats() (stop func()) {
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	ticker := h.t.cfg.Clock.NewTicker(h.t.api.period(h.current(), h.t.cfg.HeartbeatPeriod))
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

// heartbeat writes the heartbeat time and the latest progress.
func (h *hold[T]) heartbeat(ctx context.Context) error {
	return h.writeStatus(ctx, statusWrite{now: h.t.cfg.Clock.Now(), progress: h.progress.get()})
}

// finish ends the interceptor's turn (status.activeInterceptorCompleted,
// or the responder's completionTime), and the controller passes the
// request to the next one.
func (h *hold[T]) finish(result Result) error {
	err := h.writeStatus(h.termCtx, statusWrite{now: h.t.cfg.Clock.Now(), done: true, message: result.Message})
	if err != nil {
		return err
	}
	reason := EventCompleted
	if result.Outcome == Declined {
		reason = EventDeclined
	}
	h.logger.V(2).Info("Passed the request on", "outcome", result.Outcome, "message", result.Message)
	h.t.recorder.Eventf(h.current(), corev1.EventTypeNormal, reason, "%s", result.Message)
	return nil
}

// writeStatus writes w to the latest request, as long as the interceptor
// holds it. A conflict rereads the request and tries again; a request that
// is no longer ours ends the hold with ErrLost.
func (h *hold[T]) writeStatus(ctx context.Context, w statusWrite) error {
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	obj := h.current()
	var err error
	for range writeAttempts {
		if h.ctx.Err() != nil {
			return ErrLost
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !h.t.api.owns(obj) {
			h.lose(h.t.api.lossReason(obj))
			return ErrLost
		}
		callCtx, cancel := context.WithTimeout(ctx, h.t.cfg.CallTimeout)
		var written T
		written, err = h.t.api.write(callCtx, obj, w)
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
		obj, err = h.t.api.read(callCtx, obj.GetNamespace(), obj.GetName())
		cancel()
		if apierrors.IsNotFound(err) {
			h.lose("the request was deleted")
			return ErrLost
		}
		if err != nil {
			return err
		}
		h.observe(obj)
	}
	return err
}

func (h *hold[T]) logError(err error, msg string) {
	if errors.Is(err, ErrLost) || h.ctx.Err() != nil {
		return
	}
	h.logger.Error(err, msg)
}
