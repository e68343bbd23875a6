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

package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The kubelet runs in a user namespace of its own, as the same user, on
// the node's bus: there it starts, and records its events, whether the
// host lets it read /dev/kmsg or not (kubelet-node's recordEvents).
func TestTheKubeletRunsInAUserNamespaceOfItsOwn(t *testing.T) {
	const bus = "unix:path=/run/node-0/bus.sock"
	out, err := kubeletCommand(bus, []string{"sh", "-c", `cat /proc/self/uid_map; id -u; echo "$DBUS_SYSTEM_BUS_ADDRESS"`}).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q, want the uid map, the uid and the bus", out)
	}
	if fields := strings.Fields(lines[0]); len(fields) != 3 || fields[2] == "4294967295" {
		t.Errorf("uid map %q: the kubelet runs in the host's user namespace", lines[0])
	}
	if lines[1] != strconv.Itoa(os.Getuid()) {
		t.Errorf("the kubelet runs as uid %s, want %d (node-host's)", lines[1], os.Getuid())
	}
	if lines[2] != bus {
		t.Errorf("DBUS_SYSTEM_BUS_ADDRESS=%q, want %q", lines[2], bus)
	}
}

// startSleepingKubelet starts, as node-host starts the kubelet, a process
// that sleeps for an hour; it is killed when the test ends.
func startSleepingKubelet(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := kubeletCommand("unix:path=/run/node-0/bus.sock", []string{"sleep", "3600"})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd
}

// Once a graceful shutdown is done, the machine runs on for the power-off
// delay, the kubelet with it (its last pod statuses still go out), and
// then kills the kubelet and powers off.
func TestTheKubeletRunsOnUntilThePowerGoes(t *testing.T) {
	cmd := startSleepingKubelet(t)
	poweredOff := make(chan struct{})
	waiting, powerGoes := make(chan time.Duration, 1), make(chan time.Time)
	after := func(d time.Duration) <-chan time.Time {
		waiting <- d
		return powerGoes
	}
	done := make(chan int, 1)
	go func() {
		code, _ := supervise(t.Context(), cmd, poweredOff, 5*time.Second, after)
		done <- code
	}()

	close(poweredOff)
	select {
	case d := <-waiting:
		if d != 5*time.Second {
			t.Errorf("the machine waits %s before the power goes, want the power-off delay, 5s", d)
		}
	case <-done:
		t.Fatal("the machine powered off at once, without the power-off delay")
	}
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
		t.Fatalf("the kubelet is gone before the power went: %v", err)
	}
	powerGoes <- time.Now()
	if code := <-done; code != 0 {
		t.Errorf("node-host exited %d after powering off, want 0", code)
	}
	if state := cmd.ProcessState; state == nil || state.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the kubelet ended %v, want killed (SIGKILL) as the power went", state)
	}
}

// Stopped during the power-off delay, the machine stops the kubelet with
// SIGTERM at once rather than waiting for the power to go.
func TestAStopDuringThePowerOffDelayStopsTheKubelet(t *testing.T) {
	cmd := startSleepingKubelet(t)
	poweredOff := make(chan struct{})
	close(poweredOff)
	ctx, stop := context.WithCancel(t.Context())
	waiting := make(chan struct{})
	after := func(time.Duration) <-chan time.Time {
		close(waiting)
		return nil // the power never goes by itself
	}
	done := make(chan int, 1)
	go func() {
		code, _ := supervise(ctx, cmd, poweredOff, time.Hour, after)
		done <- code
	}()
	select {
	case <-waiting:
	case <-done:
		t.Fatal("the machine powered off at once, without the power-off delay")
	}
	stop()
	if code := <-done; code != 0 {
		t.Errorf("node-host exited %d when stopped, want 0", code)
	}
	if state := cmd.ProcessState; state == nil || state.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("the kubelet ended %v, want stopped with SIGTERM", state)
	}
}
