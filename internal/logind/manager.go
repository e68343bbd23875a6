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

// Package logind is a stand-in for systemd-logind's part in a graceful
// node shutdown, served on a node's private D-Bus system bus: what the
// kubelet's shutdown manager (k8s.io/kubernetes
// pkg/kubelet/nodeshutdown/systemd) speaks to. It reports
// InhibitDelayMaxUSec, hands out delay inhibitor locks as real file
// descriptors (Inhibit), each held until its holder closes it (or dies),
// as logind's, and on PowerOff signals PrepareForShutdown(true), waits
// until every delay lock taken before it is released or InhibitDelayMax
// passes, and powers the machine off. CancelScheduledShutdown, during
// that wait, calls the shutdown off with PrepareForShutdown(false), as
// logind signals a shutdown that does not happen. A shutdown whose
// PrepareForShutdown could not be signaled does not start: the manager
// stays idle, and the PowerOff call gets the error. The local control
// plane runs one per node run by the kubelet.
package logind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"
)

// The names of logind's manager on the system bus.
const (
	BusName          = "org.freedesktop.login1"
	ObjectPath       = dbus.ObjectPath("/org/freedesktop/login1")
	ManagerInterface = "org.freedesktop.login1.Manager"
)

// Config is what a Manager works with.
type Config struct {
	// InhibitDelayMax is the longest delay locks hold a shutdown back
	// (logind's InhibitDelayMaxSec). The kubelet asks for at least its
	// shutdownGracePeriod, and would rewrite logind's configuration on the
	// host if it were shorter.
	InhibitDelayMax time.Duration
	// PowerOff powers the machine off: it is called once, when a shutdown
	// is no longer held back.
	PowerOff func()
}

// Manager is the stand-in's org.freedesktop.login1.Manager.
type Manager struct {
	cfg   Config
	conn  *dbus.Conn
	props *prop.Properties
	// handOver closes the manager's copy of each lock it hands out.
	handOver *fdHandOver

	mu sync.Mutex
	// locks are the delay locks held, each done when released.
	locks []*lock
	// preparing is the shutdown under way, if any; poweredOff is true
	// once the machine powered off.
	preparing  *shutdown
	poweredOff bool
}

// lock is a delay inhibitor lock: released once every copy of its file
// descriptor is closed, which the read end of its pipe sees as the end of
// file.
type lock struct {
	who      string
	released chan struct{}
}

// shutdown is a shutdown waiting for its delay locks; canceled is closed
// when it is called off.
type shutdown struct {
	canceled chan struct{}
}

// Serve connects to the bus at address (unix:path=...) and serves the
// manager there, under BusName, until Close.
func Serve(ctx context.Context, address string, cfg Config) (*Manager, error) {
	if cfg.PowerOff == nil {
		return nil, errors.New("logind: no PowerOff")
	}
	handOver := newFDHandOver()
	conn, err := Connect(ctx, address, handOver.options()...)
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, conn: conn, handOver: handOver}
	if err := m.export(); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// export exports the manager's methods and properties, and takes BusName.
func (m *Manager) export() error {
	if err := m.conn.Export(methods{m}, ObjectPath, ManagerInterface); err != nil {
		return err
	}
	// logind emits no change of either property.
	props, err := prop.Export(m.conn, ObjectPath, prop.Map{ManagerInterface: {
		"InhibitDelayMaxUSec":  {Value: uint64(m.cfg.InhibitDelayMax / time.Microsecond), Emit: prop.EmitFalse},
		"PreparingForShutdown": {Value: false, Emit: prop.EmitFalse},
	}})
	if err != nil {
		return err
	}
	m.props = props
	reply, err := m.conn.RequestName(BusName, dbus.NameFlagDoNotQueue)
	if err != nil {
		return err
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		return fmt.Errorf("logind: %s is taken on the bus", BusName)
	}
	return nil
}

// Close stops serving: it closes the manager's connection.
func (m *Manager) Close() error {
	err := m.conn.Close()
	m.handOver.close()
	return err
}

// inhibit takes a delay lock for who and returns the write end of its
// pipe, for the reply: the manager's own copy is closed once the reply is
// sent (fdHandOver), and the lock released once the holder closes its
// copy too, or exits.
func (m *Manager) inhibit(what, who, mode string) (dbus.UnixFD, error) {
	if mode != "delay" {
		return 0, fmt.Errorf("only delay locks are supported, not %q", mode)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	l := &lock{who: who, released: make(chan struct{})}
	m.mu.Lock()
	m.locks = append(m.locks, l)
	m.mu.Unlock()
	go func() {
		// The end of file comes once every write end is closed.
		_, _ = io.Copy(io.Discard, r)
		r.Close()
		close(l.released)
		m.forget(l)
	}()
	return m.handOver.hand(w), nil
}

func (m *Manager) forget(l *lock) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.locks {
		if m.locks[i] == l {
			m.locks = append(m.locks[:i], m.locks[i+1:]...)
			return
		}
	}
}

// powerOff starts a shutdown: PrepareForShutdown(true), then, once the
// delay locks held now are released or InhibitDelayMax passed, PowerOff.
// A shutdown under way is not started twice; one whose signal cannot be
// sent is not started at all, so that the next call tries again.
func (m *Manager) powerOff() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.preparing != nil || m.poweredOff {
		return nil
	}
	if err := m.signal(true); err != nil {
		m.props.SetMust(ManagerInterface, "PreparingForShutdown", false)
		return fmt.Errorf("signaling PrepareForShutdown(true): %w", err)
	}
	s := &shutdown{canceled: make(chan struct{})}
	m.preparing = s
	go m.waitAndPowerOff(s, append([]*lock(nil), m.locks...))
	return nil
}

// signal sets PreparingForShutdown and signals PrepareForShutdown, with
// m.mu held, so that the signals of two calls cannot cross.
func (m *Manager) signal(preparing bool) error {
	m.props.SetMust(ManagerInterface, "PreparingForShutdown", preparing)
	return m.conn.Emit(ObjectPath, ManagerInterface+".PrepareForShutdown", preparing)
}

// waitAndPowerOff powers off once the locks are released or
// InhibitDelayMax passed, unless s is called off first.
func (m *Manager) waitAndPowerOff(s *shutdown, held []*lock) {
	deadline := time.NewTimer(m.cfg.InhibitDelayMax)
	defer deadline.Stop()
	for _, l := range held {
		select {
		case <-l.released:
		case <-deadline.C:
			m.powerOffNow(s)
			return
		case <-s.canceled:
			return
		}
	}
	m.powerOffNow(s)
}

func (m *Manager) powerOffNow(s *shutdown) {
	m.mu.Lock()
	if m.preparing != s {
		m.mu.Unlock()
		return
	}
	m.poweredOff = true
	m.mu.Unlock()
	m.cfg.PowerOff()
}

// cancel calls off the shutdown under way, if the machine has not powered
// off yet, and says whether there was one. The shutdown is called off even
// when PrepareForShutdown(false) cannot be signaled, which is the error.
func (m *Manager) cancel() (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.preparing
	if s == nil || m.poweredOff {
		return false, nil
	}
	m.preparing = nil
	close(s.canceled)
	if err := m.signal(false); err != nil {
		return true, fmt.Errorf("signaling PrepareForShutdown(false): %w", err)
	}
	return true, nil
}
