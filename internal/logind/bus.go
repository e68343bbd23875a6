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
	"fmt"
	"html"
	"net"
	"os"
	"time"
)

// busConfig is the configuration of a node's private system bus: one
// socket in the node's directory, and everything allowed, as the node's
// only clients are its kubelet, its logind and the harness.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="method_return"/>
    <allow send_type="signal"/>
    <allow send_type="error"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
`

// WriteBusConfig writes to path the configuration of a dbus-daemon that
// listens on the unix socket socket, and returns the bus's address for
// DBUS_SYSTEM_BUS_ADDRESS. Run it with dbus-daemon --config-file=path
// --nofork --nopidfile.
func WriteBusConfig(path, socket string) (string, error) {
	if err := os.WriteFile(path, []byte(fmt.Sprintf(busConfig, html.EscapeString(socket))), 0o644); err != nil {
		return "", err
	}
	return "unix:path=" + socket, nil
}

// BusListening is nil once the dbus-daemon of socket accepts connections.
// The socket's file appears when the daemon binds it, a moment before it
// listens: a client that connects on seeing the file can be refused, the
// more likely the busier the machine.
func BusListening(socket string) error {
	conn, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return err
	}
	return conn.Close()
}
