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
	"os"
	"strconv"
	"strings"
	"testing"
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
