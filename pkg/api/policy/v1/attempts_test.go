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

package v1

import "testing"

func TestAttemptsRoundTrip(t *testing.T) {
	for _, n := range []int32{0, 1, 42} {
		message := "Eviction of pod web-0 failed " + FormatAttempts(n) + ": PodDisruptionBudget db refuses it"
		if got := ParseAttempts(message); got != n {
			t.Errorf("ParseAttempts(%q) = %d, want %d", message, got, n)
		}
	}
	if got := ParseAttempts("Pod web-0 is terminating"); got != 0 {
		t.Errorf("a message without attempts counts %d", got)
	}
}
