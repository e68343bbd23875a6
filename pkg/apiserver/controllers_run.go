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

package apiserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// controllersRun is the run of the in-process controllers: started by a
// post-start hook, stopped by a pre-shutdown hook that waits for it to end.
//
// The post-start hook's context ends only once the server stops accepting
// requests, and the process exits about a second later without waiting
// for the goroutines it started: a controller manager still shutting
// down then never gave its Lease up, and the next leader (the restarted
// process itself, in a rolling update) waited the whole Lease duration
// before it ran a controller. Stopping the run first, while the server
// still serves the controllers' last writes, and waiting for it hands the
// Lease over at once.
type controllersRun struct {
	mu      sync.Mutex
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}
	// logger is the run's, for what its stop has to say.
	logger klog.Logger
}

// start runs run in a goroutine of its own until ctx ends or stop is
// called; a run started after stop does not start at all.
func (r *controllersRun) start(ctx context.Context, run func(context.Context)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.done != nil {
		return
	}
	r.logger = klog.FromContext(ctx)
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go func(done chan<- struct{}) {
		defer close(done)
		run(ctx)
	}(r.done)
}

// stop ends the run and waits for it to return, at most timeout, so that
// the process shuts down on time whatever its controllers do. The error
// says they were still running; the shutdown goes on all the same.
func (r *controllersRun) stop(timeout time.Duration) error {
	r.mu.Lock()
	r.stopped = true
	cancel, done, logger := r.cancel, r.done, r.logger
	r.mu.Unlock()
	if done == nil {
		return nil
	}
	logger.Info("Stopping the controllers before the server stops serving")
	cancel()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		err := fmt.Errorf("the controllers did not stop within %s", timeout)
		logger.Info("Shutting down without waiting for the controllers any longer", "err", err)
		return err
	}
}
