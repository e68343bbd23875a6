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
	"os"
	"sync"

	"github.com/godbus/dbus/v5"
)

// fdHandOver closes the stand-in's copy of each file descriptor a reply
// hands to a caller once that reply has been sent. A delay lock is
// released when every copy of its pipe's write end is closed, so the
// stand-in's copy must go as soon as the caller holds its own, and not
// before: logind's reply holds a duplicate of the descriptor, closed once
// the reply is sent, and logind closes its own at once. godbus sends a
// method's reply after the method returned, then retires the reply's
// serial whether the send succeeded or failed (Conn.sendMessageAndIfClosed):
// the outgoing interceptor pairs a reply with the descriptors it carries,
// and the serial generator's RetireSerial closes them.
type fdHandOver struct {
	mu sync.Mutex
	// next and used are the serial generator's, as godbus's own: used
	// serials are skipped when the counter wraps, and 0 is never one.
	next uint32
	used map[uint32]bool
	// pending are the descriptors a method returned, by number, until
	// the reply carrying them is about to be sent; sending are those of
	// the replies being sent, by the reply's serial.
	pending map[dbus.UnixFD]*os.File
	sending map[uint32][]*os.File
}

func newFDHandOver() *fdHandOver {
	return &fdHandOver{next: 1, used: map[uint32]bool{0: true},
		pending: map[dbus.UnixFD]*os.File{}, sending: map[uint32][]*os.File{}}
}

// options are the options of the connection whose replies hand the
// descriptors over.
func (h *fdHandOver) options() []dbus.ConnOption {
	return []dbus.ConnOption{dbus.WithSerialGenerator(h), dbus.WithOutgoingInterceptor(h.intercept)}
}

// hand returns f's descriptor for a method's reply; f is closed once the
// reply has been sent.
func (h *fdHandOver) hand(f *os.File) dbus.UnixFD {
	fd := dbus.UnixFD(f.Fd())
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pending[fd] = f
	return fd
}

// intercept sees every message the connection sends, its serial set,
// before it is sent.
func (h *fdHandOver) intercept(msg *dbus.Message) {
	if msg.Type != dbus.TypeMethodReply {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range msg.Body {
		fd, ok := v.(dbus.UnixFD)
		if f, pending := h.pending[fd]; ok && pending {
			delete(h.pending, fd)
			h.sending[msg.Serial()] = append(h.sending[msg.Serial()], f)
		}
	}
}

// GetSerial returns a serial for a message the connection sends.
func (h *fdHandOver) GetSerial() uint32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.next
	for h.used[n] {
		n++
	}
	h.used[n] = true
	h.next = n + 1
	return n
}

// RetireSerial is called once a message is done with: a reply once it
// was sent, or failed to be. The descriptors it carried are closed.
func (h *fdHandOver) RetireSerial(serial uint32) {
	h.mu.Lock()
	files := h.sending[serial]
	delete(h.sending, serial)
	delete(h.used, serial)
	h.mu.Unlock()
	for _, f := range files {
		f.Close()
	}
}

// close closes every descriptor not handed over yet, once the connection
// is closed and no reply will carry them.
func (h *fdHandOver) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for fd, f := range h.pending {
		f.Close()
		delete(h.pending, fd)
	}
	for serial, files := range h.sending {
		for _, f := range files {
			f.Close()
		}
		delete(h.sending, serial)
	}
}
