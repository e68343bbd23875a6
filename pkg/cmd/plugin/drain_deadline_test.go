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

package plugin

import (
	"strings"
	"testing"
	"time"
)

func TestDeadlineFlagsRefuseWhatCannotWork(t *testing.T) {
	for _, tc := range []struct {
		name       string
		flags      deadlineFlags
		timeout    time.Duration
		wantErr    string
		escalation string
	}{
		{"none", deadlineFlags{}, 0, "", "fail"},
		{"a deadline, fail by default", deadlineFlags{Deadline: time.Minute}, 0, "", "fail"},
		{"delete", deadlineFlags{Deadline: time.Minute, OnDeadline: "delete"}, 0, "", "delete"},
		{"an escalation without a deadline", deadlineFlags{OnDeadline: "evict"}, 0, "--on-deadline needs --deadline", ""},
		{"an unknown escalation", deadlineFlags{Deadline: time.Minute, OnDeadline: "force"}, 0, `--on-deadline: "force" is not one of fail, evict, delete`, ""},
		{"a negative deadline", deadlineFlags{Deadline: -time.Second}, 0, "--deadline must not be negative", ""},
		{"a deadline after the time-out", deadlineFlags{Deadline: time.Minute, OnDeadline: "evict"}, time.Minute, "must be shorter than --timeout", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.flags.validateDeadline(tc.timeout)
			if tc.wantErr == "" {
				if err != nil || string(tc.flags.escalation) != tc.escalation {
					t.Errorf("validate() = %v, escalation %q; want nil, %q", err, tc.flags.escalation, tc.escalation)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("validate() = %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}
