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
	"github.com/godbus/dbus/v5"
)

// methods are the D-Bus methods of the manager, by logind's names and
// signatures: only what they export is on the bus.
type methods struct {
	m *Manager
}

// Inhibit takes an inhibitor lock: (ssss) -> h. The caller releases it by
// closing the file descriptor. A caller that wants no reply could never
// hold it: it gets none, as logind's would be released at once.
func (x methods) Inhibit(call dbus.Message, what, who, why, mode string) (dbus.UnixFD, *dbus.Error) {
	if call.Flags&dbus.FlagNoReplyExpected != 0 {
		return 0, nil
	}
	fd, err := x.m.inhibit(what, who, mode)
	if err != nil {
		return 0, dbus.MakeFailedError(err)
	}
	return fd, nil
}

// PowerOff shuts the machine down: (b) -> ().
func (x methods) PowerOff(interactive bool) *dbus.Error {
	if err := x.m.powerOff(); err != nil {
		return dbus.MakeFailedError(err)
	}
	return nil
}

// CancelScheduledShutdown calls off the shutdown under way: () -> b.
func (x methods) CancelScheduledShutdown() (bool, *dbus.Error) {
	canceled, err := x.m.cancel()
	if err != nil {
		return canceled, dbus.MakeFailedError(err)
	}
	return canceled, nil
}
