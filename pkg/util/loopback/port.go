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

// Package loopback finds free ports on the loopback interface, for servers
// that must bind 127.0.0.1 without a fixed port.
package loopback

import (
	"net"
	"slices"
)

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment
// ago and are not in taken, the ports the caller knows to be spoken for
// without being bound yet. The kernel may hand a port just released to the
// next caller, so a port chosen but not yet bound must be listed in taken.
func FreePorts(n int, taken ...int) ([]int, error) {
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !slices.Contains(taken, port) && !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	return ports, nil
}
