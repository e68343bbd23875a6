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
// descriptors (Inhibit), and on PowerOff signals PrepareForShutdown(true),
// waits until every delay lock taken before it is released or
// InhibitDelayMax passes, and powers the machine off.
// CancelScheduledShutdown, during that wait, calls the shutdown off with
// PrepareForShutdown(false), as logind signals a shutdown that does not
// happen. The local control plane runs one per node run by the kubelet.
package logind

import (
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

// lockHandOver is how long the stand-in keeps its own copy of a lock's
// file descriptor after Inhibit returned it: the reply carrying it is
// sent after the method returns, and the lock is released when every copy
// is closed.
const lockHandOver = 2 * time.Second

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

// Serve serves the manager on conn, under BusName.
func Serve(conn *dbus.Conn, cfg Config) (*Manager, error) {
	if cfg.PowerOff == nil {
		return nil, errors.New("logind: no PowerOff")
	}
	m := &Manager{cfg: cfg, conn: conn}
	if err := conn.Export(methods{m}, ObjectPath, ManagerInterface); err != nil {
		return nil, err
	}
	props, err := prop.Export(conn, ObjectPath, prop.Map{ManagerInterface: {
		"InhibitDelayMaxUSec":  {Value: uint64(cfg.InhibitDelayMax / time.Microsecond), Emit: prop.EmitFalse},
		"PreparingForShutdown": {Value: false, Emit: prop.EmitTrue},
	}})
	if err != nil {
		return nil, err
	}
	m.props = props
	reply, err := conn.RequestName(BusName, dbus.NameFlagDoNotQueue)
	if err != nil {
		return nil, err
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		return nil, fmt.Errorf("logind: %s is taken on the bus", BusName)
	}
	return m, nil
}

// inhibit takes a delay lock for who and returns the write end of its pipe,
// which the caller closes to release it.
func (m *Manager) inhibit(what, who, mode string) (*os.File, error) {
	if mode != "delay" {
		return nil, fmt.Errorf("only delay locks are supported, not %q", mode)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	l := &lock{who: who, released: make(chan struct{})}
	go func() {
		// The end of file comes once every write end is closed.
		_, _ = io.Copy(io.Discard, r)
		r.Close()
		close(l.released)
		m.forget(l)
	}()
	m.mu.Lock()
	m.locks = append(m.locks, l)
	m.mu.Unlock()
	time.AfterFunc(lockHandOver, func() { w.Close() })
	return w, nil
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
// A shutdown under way is not started twice.
func (m *Manager) powerOff() error {
	m.mu.Lock()
	if m.preparing != nil || m.poweredOff {
		m.mu.Unlock()
		return nil
	}
	s := &shutdown{canceled: make(chan struct{})}
	m.preparing = s
	held := append([]*lock(nil), m.locks...)
	m.mu.Unlock()
	m.props.SetMust(ManagerInterface, "PreparingForShutdown", true)
	if err := m.conn.Emit(ObjectPath, ManagerInterface+".PrepareForShutdown", true); err != nil {
		return err
	}
	go m.waitAndPowerOff(s, held)
	return nil
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
// off yet, and says whether there was one.
func (m *Manager) cancel() (bool, error) {
	m.mu.Lock()
	s := m.preparing
	if s == nil || m.poweredOff {
		m.mu.Unlock()
		return false, nil
	}
	m.preparing = nil
	close(s.canceled)
	m.mu.Unlock()
	m.props.SetMust(ManagerInterface, "PreparingForShutdown", false)
	return true, m.conn.Emit(ObjectPath, ManagerInterface+".PrepareForShutdown", false)
}
