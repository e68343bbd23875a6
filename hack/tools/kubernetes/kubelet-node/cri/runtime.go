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

// Package cri is the container runtime of kubelet-node: upstream's fake CRI
// runtime (k8s.io/cri-client/pkg/fake, the one kubemark's hollow nodes run)
// served over gRPC on a unix socket, whose containers are simulated
// processes. Upstream's fake stops a container at once with exit code 0;
// here a stop behaves as a signal to a process does: SIGTERM first, the
// container exits after the delay its pod declares (ExitDelayAnnotation,
// none by default) with 143, or is killed with 137 when the grace period
// the kubelet gives ends first.
package cri

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakeremote "k8s.io/cri-client/pkg/fake"
)

// ExitDelayAnnotation on a pod is how long its containers take to exit
// after SIGTERM ("20s"), as an application that finishes its work first;
// none exits at once. A delay longer than the grace period ends in SIGKILL.
// The local control plane's tests set it by their own copy
// (localcluster.ExitDelayAnnotation: neither module imports the other),
// which a test of theirs keeps equal to this one.
const ExitDelayAnnotation = "kubelet-node.evictionrequest.github.io/exit-delay"

// Exit codes of a process ended by a signal: 128 + the signal's number.
const (
	ExitCodeSIGTERM = 128 + 15
	ExitCodeSIGKILL = 128 + 9
)

// Runtime is a CRI runtime without containers.
type Runtime struct {
	*fakeremote.RemoteRuntime
	server *grpc.Server
	clock  func() time.Time

	mu sync.Mutex
	// terminating are the containers that got SIGTERM.
	terminating map[string]*termination
}

// termination is a container's SIGTERM: when it exits on its own, and a
// channel closed once it exited.
type termination struct {
	exitAt time.Time
	exited chan struct{}
	once   sync.Once
}

// New returns a runtime whose runtime and network are ready.
func New() *Runtime {
	r := &Runtime{RemoteRuntime: fakeremote.NewFakeRemoteRuntime(), server: grpc.NewServer(), clock: time.Now, terminating: map[string]*termination{}}
	runtimeapi.RegisterRuntimeServiceServer(r.server, r)
	runtimeapi.RegisterImageServiceServer(r.server, r)
	r.RuntimeService.FakeStatus = &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}
	return r
}

// Serve serves the runtime on the unix socket path until Stop.
func (r *Runtime) Serve(path string) error {
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", path, err)
	}
	go func() { _ = r.server.Serve(l) }()
	return nil
}

// Stop stops serving.
func (r *Runtime) Stop() {
	r.server.Stop()
}

// StopContainer sends the container SIGTERM: it exits when its pod's exit
// delay has passed, or is killed when the timeout (its grace period, in
// seconds) ends first. A second stop with a shorter timeout kills sooner;
// the first SIGTERM's exit time stays.
func (r *Runtime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	t, running, err := r.sigterm(req.ContainerId)
	if err != nil {
		return nil, err
	}
	if !running {
		return &runtimeapi.StopContainerResponse{}, nil
	}
	killAt := r.clock().Add(time.Duration(req.Timeout) * time.Second)
	code, at := int32(ExitCodeSIGTERM), t.exitAt
	if killAt.Before(t.exitAt) {
		code, at = ExitCodeSIGKILL, killAt
	}
	timer := time.NewTimer(at.Sub(r.clock()))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.exited:
		return &runtimeapi.StopContainerResponse{}, nil
	case <-timer.C:
	}
	if err := r.exit(ctx, req.ContainerId, t, code); err != nil {
		return nil, err
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// sigterm records the container's first SIGTERM and returns it, and
// whether the container still runs.
func (r *Runtime) sigterm(id string) (t *termination, running bool, err error) {
	rs := r.RuntimeService
	rs.Lock()
	c, ok := rs.Containers[id]
	if !ok {
		rs.Unlock()
		return nil, false, fmt.Errorf("container %q not found", id)
	}
	running = c.State == runtimeapi.ContainerState_CONTAINER_RUNNING
	var delay time.Duration
	if sandbox, ok := rs.Sandboxes[c.SandboxID]; ok {
		delay, _ = time.ParseDuration(sandbox.Annotations[ExitDelayAnnotation])
	}
	rs.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok = r.terminating[id]
	if !ok {
		t = &termination{exitAt: r.clock().Add(max(delay, 0)), exited: make(chan struct{})}
		r.terminating[id] = t
	}
	return t, running, nil
}

// exit ends the container with code, unless it ended meanwhile, and
// returns every stop that waits for it.
func (r *Runtime) exit(ctx context.Context, id string, t *termination, code int32) error {
	defer t.once.Do(func() { close(t.exited) })
	rs := r.RuntimeService
	rs.Lock()
	c, ok := rs.Containers[id]
	running := ok && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING
	rs.Unlock()
	if !running {
		return nil
	}
	if err := rs.StopContainer(ctx, id, 0); err != nil {
		return err
	}
	rs.Lock()
	defer rs.Unlock()
	if c, ok := rs.Containers[id]; ok {
		c.ExitCode, c.Reason = code, "Error"
	}
	return nil
}

// RemoveContainer forgets the container's SIGTERM with the container.
func (r *Runtime) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	r.mu.Lock()
	delete(r.terminating, req.ContainerId)
	r.mu.Unlock()
	return r.RemoteRuntime.RemoveContainer(ctx, req)
}
