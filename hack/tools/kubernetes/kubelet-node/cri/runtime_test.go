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

package cri

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// startContainer runs a container in a sandbox of a pod annotated with
// annotations, as the kubelet does.
func startContainer(t *testing.T, r *Runtime, annotations map[string]string) string {
	t.Helper()
	ctx := t.Context()
	sandbox, err := r.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata:    &runtimeapi.PodSandboxMetadata{Name: "web-0", Namespace: "shop", Uid: "uid-1"},
		Annotations: annotations,
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandbox.PodSandboxId,
		Config: &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "app"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}
	return c.ContainerId
}

// stop stops the container with timeout (seconds) and returns how long the
// stop took and the exit code.
func stop(t *testing.T, r *Runtime, id string, timeout int64) (time.Duration, int32) {
	t.Helper()
	start := time.Now()
	if _, err := r.StopContainer(t.Context(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeout}); err != nil {
		t.Fatal(err)
	}
	status, err := r.ContainerStatus(t.Context(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		t.Fatal(err)
	}
	if status.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("state after the stop %v, want exited", status.Status.State)
	}
	return time.Since(start), status.Status.ExitCode
}

// A container exits after its pod's exit delay with SIGTERM's code, or is
// killed at the end of its grace period with SIGKILL's, as a process would.
func TestAStopHonoursTheGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name     string
		delay    string
		timeout  int64
		wantTook time.Duration
		wantCode int32
	}{
		{"no delay: exits at SIGTERM", "", 30, 0, ExitCodeSIGTERM},
		{"exits before the grace period ends", "5s", 30, 5 * time.Second, ExitCodeSIGTERM},
		{"killed when the grace period ends", "60s", 30, 30 * time.Second, ExitCodeSIGKILL},
		{"a zero grace period kills at once", "5s", 0, 0, ExitCodeSIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := New()
				id := startContainer(t, r, map[string]string{ExitDelayAnnotation: tc.delay})
				took, code := stop(t, r, id, tc.timeout)
				if took != tc.wantTook || code != tc.wantCode {
					t.Errorf("the stop took %s and exited %d, want %s and %d", took, code, tc.wantTook, tc.wantCode)
				}
			})
		})
	}
}

// A second stop with a shorter grace period, as the kubelet sends when a
// pod's deletion is forced, kills the container then; the first stop
// returns with it.
func TestAShorterSecondStopKillsSooner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New()
		id := startContainer(t, r, map[string]string{ExitDelayAnnotation: "60s"})
		start := time.Now()
		var firstTook time.Duration
		first := make(chan struct{})
		go func() {
			defer close(first)
			_, _ = r.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30})
			firstTook = time.Since(start)
		}()
		time.Sleep(10 * time.Second)
		took, code := stop(t, r, id, 2)
		if took != 2*time.Second || code != ExitCodeSIGKILL {
			t.Errorf("the second stop took %s and exited %d, want 2s and %d", took, code, ExitCodeSIGKILL)
		}
		<-first
		if firstTook != 12*time.Second {
			t.Errorf("the first stop returned after %s, want 12s, when the container was killed", firstTook)
		}
	})
}
