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

package loopback

import (
	"net"
	"strconv"
	"testing"
)

// The ports are distinct, bindable, not among those taken, and below the
// kernel's ephemeral range, where no outgoing connection takes them.
func TestFreePortsAreBindableAndOutsideTheEphemeralRange(t *testing.T) {
	taken := []int{}
	for range 3 {
		ports, err := FreePorts(20, taken...)
		if err != nil {
			t.Fatal(err)
		}
		if len(ports) != 20 {
			t.Fatalf("got %d ports, want 20", len(ports))
		}
		seen := map[int]bool{}
		for _, port := range ports {
			if port < lowestPort || port >= ephemeralStart() {
				t.Errorf("port %d is outside [%d, %d)", port, lowestPort, ephemeralStart())
			}
			if seen[port] {
				t.Errorf("port %d given twice", port)
			}
			seen[port] = true
			for _, p := range taken {
				if p == port {
					t.Errorf("port %d was taken", port)
				}
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				t.Errorf("port %d: %v", port, err)
				continue
			}
			_ = l.Close()
		}
		taken = append(taken, ports...)
	}
}

// A port held by a listener is never handed out.
func TestFreePortsSkipABoundPort(t *testing.T) {
	ports, err := FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if free(ports[0]) {
		t.Errorf("port %d is bound, yet free says it is free", ports[0])
	}
}
