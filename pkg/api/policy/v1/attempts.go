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

// Package v1 holds the rules about the Eviction API (policy/v1 Eviction)
// that the controllers and the SDK share, after k/k's pkg/api/v1/pod: how
// the failed attempts to evict a pod are counted in a message, where the
// lifecycle.k8s.io evictor keeps them across restarts, and how an eviction
// asks the eviction API bridge to skip the pod's participants (skip.go).
package v1

import (
	"fmt"
	"regexp"
	"strconv"
)

// attemptsPattern finds FormatAttempts' text in a message.
var attemptsPattern = regexp.MustCompile(`\(attempts=(\d+)\)`)

// FormatAttempts is how a message counts the n failed attempts to evict a
// pod: "(attempts=n)", which ParseAttempts reads back.
func FormatAttempts(n int32) string {
	return fmt.Sprintf("(attempts=%d)", n)
}

// ParseAttempts is the count of failed attempts FormatAttempts wrote into
// message; 0 when it holds none.
func ParseAttempts(message string) int32 {
	m := attemptsPattern.FindStringSubmatch(message)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseInt(m[1], 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}
