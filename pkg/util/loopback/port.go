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
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
)

// lowestPort is the lowest port FreePorts hands out: below it are the
// well-known and commonly configured ports.
const lowestPort = 10000

// defaultEphemeralStart is where Linux's ephemeral range begins by default
// (net.ipv4.ip_local_port_range), used when the range cannot be read.
const defaultEphemeralStart = 32768

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment
// ago and are not in taken, the ports the caller knows to be spoken for
// without being bound yet. The ports lie below the kernel's ephemeral range,
// from which it picks the local port of every outgoing connection: a
// component restarted on its port (an etcd member killed by a test) found
// it held by some process's connection made while it was down, and could
// not bind it again.
func FreePorts(n int, taken ...int) ([]int, error) {
	high := ephemeralStart()
	if high-lowestPort < 4*(n+len(taken)) {
		return nil, errors.New("too few ports below the ephemeral range")
	}
	ports := make([]int, 0, n)
	for len(ports) < n {
		port := lowestPort + rand.IntN(high-lowestPort)
		if slices.Contains(taken, port) || slices.Contains(ports, port) || !free(port) {
			continue
		}
		ports = append(ports, port)
	}
	return ports, nil
}

// free is true when port can be bound on 127.0.0.1 now.
func free(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// ephemeralStart is the first port of the kernel's ephemeral range.
func ephemeralStart() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralStart
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return defaultEphemeralStart
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil || start <= lowestPort {
		return defaultEphemeralStart
	}
	return start
}
