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

package logind

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// startBus runs a private dbus-daemon for the test and returns its address.
func startBus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	socket := filepath.Join(dir, "bus.sock")
	address, err := WriteBusConfig(filepath.Join(dir, "bus.conf"), socket)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+filepath.Join(dir, "bus.conf"), "--nofork", "--nopidfile")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dbus-daemon (Debian's dbus, hack/install-debian-packages.sh): %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := BusListening(socket); err == nil {
			return address
		}
		if time.Now().After(deadline) {
			t.Fatal("dbus-daemon did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kubelet is the kubelet's side of the protocol, as its shutdown manager
// speaks it (pkg/kubelet/nodeshutdown/systemd): the delay it reads, the
// lock it holds, the signals it receives.
type kubelet struct {
	conn    *dbus.Conn
	lock    int
	signals chan *dbus.Signal
}

func newKubelet(t *testing.T, address string) *kubelet {
	t.Helper()
	conn, err := Connect(t.Context(), address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	k := &kubelet{conn: conn, signals: make(chan *dbus.Signal, 10)}
	conn.Signal(k.signals)
	if err := conn.AddMatchSignal(dbus.WithMatchInterface(ManagerInterface), dbus.WithMatchMember("PrepareForShutdown"), dbus.WithMatchObjectPath(ObjectPath)); err != nil {
		t.Fatal(err)
	}
	var fd uint32
	if err := conn.Object(BusName, ObjectPath).Call(ManagerInterface+".Inhibit", 0, "shutdown", "kubelet", "Kubelet needs time to handle node shutdown", "delay").Store(&fd); err != nil {
		t.Fatal(err)
	}
	k.lock = int(fd)
	return k
}

// release releases the kubelet's lock, as it does once its pods stopped.
func (k *kubelet) release() {
	_ = syscall.Close(k.lock)
}

// nextSignal is the next PrepareForShutdown the kubelet receives; the
// bus's own signals to it (NameAcquired) are skipped, as the kubelet's
// matching does.
func (k *kubelet) nextSignal(t *testing.T) bool {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case s := <-k.signals:
			if s.Name != ManagerInterface+".PrepareForShutdown" {
				continue
			}
			if len(s.Body) != 1 {
				t.Fatalf("PrepareForShutdown %v, want one bool", s.Body)
			}
			return s.Body[0].(bool)
		case <-timeout:
			t.Fatal("no PrepareForShutdown")
			return false
		}
	}
}

// serve serves a manager on the bus and returns a channel closed when it
// powers off.
func serve(t *testing.T, address string, delayMax time.Duration) chan struct{} {
	t.Helper()
	_, off := serveManager(t, address, delayMax)
	return off
}

// serveManager serves a manager on the bus and returns it, and a channel
// closed when it powers off.
func serveManager(t *testing.T, address string, delayMax time.Duration) (*Manager, chan struct{}) {
	t.Helper()
	off := make(chan struct{})
	m, err := Serve(t.Context(), address, Config{InhibitDelayMax: delayMax, PowerOff: func() { close(off) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, off
}

// settle is how long a test waits for what must not happen (a power-off
// while a lock is held, or after a cancel) to show.
const settle = 2 * time.Second

// The kubelet reads the longest delay as microseconds, a uint64; a smaller
// value than its grace period would make it rewrite logind's
// configuration on the host.
func TestTheKubeletReadsTheInhibitDelay(t *testing.T) {
	address := startBus(t)
	serve(t, address, 90*time.Second)
	k := newKubelet(t, address)
	v, err := k.conn.Object(BusName, ObjectPath).GetProperty(ManagerInterface + ".InhibitDelayMaxUSec")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := v.Value().(uint64); !ok || got != uint64(90*time.Second/time.Microsecond) {
		t.Errorf("InhibitDelayMaxUSec = %v (%T), want 90 s in microseconds as a uint64", v.Value(), v.Value())
	}
}

// PowerOff signals PrepareForShutdown(true), waits while the kubelet holds
// its delay lock, and powers off once it releases it.
func TestPowerOffWaitsForTheDelayLock(t *testing.T) {
	address := startBus(t)
	off := serve(t, address, time.Minute)
	k := newKubelet(t, address)
	if err := PowerOff(t.Context(), address); err != nil {
		t.Fatal(err)
	}
	if !k.nextSignal(t) {
		t.Fatal("PrepareForShutdown(false), want true")
	}
	select {
	case <-off:
		t.Fatal("powered off while the kubelet holds its lock")
	case <-time.After(settle):
	}
	k.release()
	select {
	case <-off:
	case <-time.After(10 * time.Second):
		t.Fatal("not powered off after the lock was released")
	}
}

// A lock that is never released holds the shutdown back only for the
// longest delay.
func TestPowerOffAfterTheLongestDelay(t *testing.T) {
	address := startBus(t)
	off := serve(t, address, 3*time.Second)
	k := newKubelet(t, address)
	if err := PowerOff(t.Context(), address); err != nil {
		t.Fatal(err)
	}
	k.nextSignal(t)
	select {
	case <-off:
	case <-time.After(15 * time.Second):
		t.Fatal("not powered off after InhibitDelayMax")
	}
}

// A shutdown called off during its delay signals PrepareForShutdown(false)
// and does not power off, even once the lock is released; with none under
// way there is nothing to call off.
func TestCancelCallsTheShutdownOff(t *testing.T) {
	address := startBus(t)
	off := serve(t, address, time.Minute)
	k := newKubelet(t, address)
	if canceled, err := CancelShutdown(t.Context(), address); err != nil || canceled {
		t.Fatalf("CancelShutdown() with no shutdown = %v, %v", canceled, err)
	}
	if err := PowerOff(t.Context(), address); err != nil {
		t.Fatal(err)
	}
	k.nextSignal(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if canceled, err := CancelShutdown(ctx, address); err != nil || !canceled {
		t.Fatalf("CancelShutdown() = %v, %v; want true", canceled, err)
	}
	if k.nextSignal(t) {
		t.Fatal("PrepareForShutdown(true) after the cancel, want false")
	}
	k.release()
	select {
	case <-off:
		t.Fatal("powered off after the shutdown was called off")
	case <-time.After(settle):
	}
}

// A lock lasts as long as its holder keeps its file descriptor, and no
// longer: the stand-in's own copy is gone once its reply was sent, so
// that a lock released at once holds no shutdown back.
func TestAReleasedLockHoldsNoShutdownBack(t *testing.T) {
	address := startBus(t)
	off := serve(t, address, time.Minute)
	k := newKubelet(t, address)
	k.release()
	if err := PowerOff(t.Context(), address); err != nil {
		t.Fatal(err)
	}
	// Well under settle: before the fix, the stand-in kept its copy of
	// every lock for two seconds.
	select {
	case <-off:
	case <-time.After(1500 * time.Millisecond):
		t.Fatal("not powered off, though the only lock was released")
	}
}

// A caller that wants no reply to Inhibit cannot get the lock's file
// descriptor: no lock is held for it.
func TestInhibitWithoutAReplyTakesNoLock(t *testing.T) {
	address := startBus(t)
	off := serve(t, address, time.Minute)
	k := newKubelet(t, address)
	k.release()
	call := k.conn.Object(BusName, ObjectPath).Call(ManagerInterface+".Inhibit", dbus.FlagNoReplyExpected, "shutdown", "kubelet", "why", "delay")
	if call.Err != nil {
		t.Fatal(call.Err)
	}
	if err := PowerOff(t.Context(), address); err != nil {
		t.Fatal(err)
	}
	select {
	case <-off:
	case <-time.After(1500 * time.Millisecond):
		t.Fatal("not powered off, though no lock can be held")
	}
}

// A shutdown whose PrepareForShutdown cannot be signaled does not start:
// the caller gets the error and the manager stays idle, so that the next
// PowerOff is tried again instead of being taken for one under way.
func TestAFailedPrepareForShutdownLeavesTheManagerIdle(t *testing.T) {
	address := startBus(t)
	m, off := serveManager(t, address, time.Minute)
	newKubelet(t, address)
	// The bus connection is gone: no signal can be sent.
	_ = m.conn.Close()
	for range 2 {
		if err := m.powerOff(); err == nil {
			t.Fatal("powerOff() without the bus: no error")
		}
		m.mu.Lock()
		preparing := m.preparing
		m.mu.Unlock()
		if preparing != nil {
			t.Fatal("a shutdown stays under way though its PrepareForShutdown failed")
		}
	}
	if v := m.props.GetMust(ManagerInterface, "PreparingForShutdown"); v != false {
		t.Errorf("PreparingForShutdown = %v after the failure, want false", v)
	}
	select {
	case <-off:
		t.Fatal("powered off without a PrepareForShutdown")
	default:
	}
}
