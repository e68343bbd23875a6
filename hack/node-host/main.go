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

// Command node-host is the machine of a node that the local control plane
// runs with the real kubelet: it serves the node's logind stand-in
// (internal/logind) on the node's private D-Bus system bus, runs the
// node's kubelet (kubelet-node) as its child on that bus, in a user
// namespace of its own, and powers the machine off when a graceful
// shutdown is done: --power-off-delay later it kills the kubelet, as the
// power going does, and exits. SIGTERM stops the kubelet and exits, as
// the harness stops a cluster.
//
//	node-host --bus=unix:path=DIR/bus.sock --inhibit-delay-max=2m [--power-off-delay=5s] -- kubelet-node --node-name=NAME ...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/internal/logind"
)

// stopGracePeriod is how long the kubelet gets to exit after SIGTERM.
const stopGracePeriod = 10 * time.Second

func main() {
	bus := flag.String("bus", "", "Address of the node's D-Bus system bus (unix:path=...), where logind is served and the kubelet connects.")
	delayMax := flag.Duration("inhibit-delay-max", 5*time.Minute,
		"logind's InhibitDelayMaxSec: the longest the kubelet's delay lock holds a shutdown back; at least the kubelet's shutdownGracePeriod.")
	powerOffDelay := flag.Duration("power-off-delay", 0,
		"How long the machine runs on after a graceful shutdown is done (the kubelet released its delay lock) before the power goes: the time the kubelet has left to write its last pod statuses. 0 powers off at once.")
	klog.InitFlags(nil)
	flag.Parse()
	if *bus == "" || flag.NArg() == 0 || *powerOffDelay < 0 {
		fmt.Fprintln(os.Stderr, "usage: node-host --bus=ADDRESS [--inhibit-delay-max=D] [--power-off-delay=D>=0] -- KUBELET [ARGS...]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background().WithName("node-host"))
	code, err := run(ctx, *bus, *delayMax, *powerOffDelay, flag.Args())
	if err != nil {
		klog.FromContext(ctx).Error(err, "node-host failed")
	}
	os.Exit(code)
}

// run serves logind, runs the kubelet and returns the exit code: the
// kubelet's when it exits on its own, 0 when the machine powered off (at
// powerOffDelay after a graceful shutdown) or was stopped.
func run(ctx context.Context, bus string, delayMax, powerOffDelay time.Duration, kubelet []string) (int, error) {
	poweredOff := make(chan struct{})
	manager, err := logind.Serve(ctx, bus, logind.Config{InhibitDelayMax: delayMax, PowerOff: func() { close(poweredOff) }})
	if err != nil {
		return 1, err
	}
	defer func() { _ = manager.Close() }()
	cmd := kubeletCommand(bus, kubelet)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("starting the kubelet in a user namespace of its own (the host must allow user namespaces): %w", err)
	}
	return supervise(ctx, cmd, poweredOff, powerOffDelay, time.After)
}

// supervise waits for the kubelet (cmd, started) to exit and returns its
// exit code; or, once poweredOff is closed, kills it after powerOffDelay
// (after is time.After, or a test's clock) and returns 0; or, once ctx is
// done, stops it and returns 0.
func supervise(ctx context.Context, cmd *exec.Cmd, poweredOff <-chan struct{}, powerOffDelay time.Duration, after func(time.Duration) <-chan time.Time) (int, error) {
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
		err := waitErr
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), fmt.Errorf("the kubelet exited: %w", err)
		}
		return 1, err
	case <-poweredOff:
		klog.FromContext(ctx).Info("The graceful shutdown is done: powering off", "after", powerOffDelay)
		select {
		case <-exited:
		case <-after(powerOffDelay):
		case <-ctx.Done():
			stopKubelet(cmd, exited)
			return 0, nil
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		return 0, nil
	case <-ctx.Done():
		stopKubelet(cmd, exited)
		return 0, nil
	}
}

// stopKubelet sends the kubelet SIGTERM, and SIGKILL if it has not exited
// (exited closed) stopGracePeriod later.
func stopKubelet(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(stopGracePeriod):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// kubeletCommand is the command of the kubelet, on the node's bus, in a
// user namespace of its own, as a rootless kubelet runs (KEP-2033): the
// kubelet watches /dev/kmsg for out-of-memory kills and stops if it
// cannot read it, unless it runs in a user namespace (its
// KubeletInUserNamespace gate, on by default), where it goes on without
// that watcher. The ids map onto themselves, so that the kubelet is the
// same user to the files, the bus and the host: node-host's own uid and
// gid, or, as root, every id but the last (the full range would be the
// host's namespace to the kubelet).
func kubeletCommand(bus string, kubelet []string) *exec.Cmd {
	cmd := exec.Command(kubelet[0], kubelet[1:]...)
	cmd.Env = append(os.Environ(), "DBUS_SYSTEM_BUS_ADDRESS="+bus)
	uid, gid, size := os.Getuid(), os.Getgid(), 1
	if uid == 0 {
		size = 1<<32 - 2
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: size}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: size}}}
	return cmd
}
