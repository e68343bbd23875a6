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

package app

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// The deadline flags are parsed with the command's flags and checked
// together: the escalation's name, its need of a deadline, and a deadline
// before the time-out. The default escalation is fail.
func TestDeadlineFlagsRefuseWhatCannotWork(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		timeout    time.Duration
		wantErr    string
		escalation string
	}{
		{"none", nil, 0, "", "fail"},
		{"a deadline, fail by default", []string{"--deadline=1m"}, 0, "", "fail"},
		{"delete", []string{"--deadline=1m", "--on-deadline=delete"}, 0, "", "delete"},
		{"an escalation without a deadline", []string{"--on-deadline=evict"}, 0, "--on-deadline needs --deadline", ""},
		{"an unknown escalation", []string{"--deadline=1m", "--on-deadline=force"}, 0, `invalid argument "force" for "--on-deadline" flag: "force" is not one of fail, evict, delete`, ""},
		{"a negative deadline", []string{"--deadline=-1s"}, 0, "--deadline must not be negative", ""},
		{"a deadline after the time-out", []string{"--deadline=1m", "--on-deadline=evict"}, time.Minute, "must be shorter than --timeout", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var flags deadlineFlags
			fs := pflag.NewFlagSet("drain", pflag.ContinueOnError)
			flags.addDeadlineFlags(fs)
			err := fs.Parse(tc.args)
			if err == nil {
				err = flags.validateDeadline(tc.timeout)
			}
			if tc.wantErr == "" {
				if got := string(flags.OnDeadline.OrDefault()); err != nil || got != tc.escalation {
					t.Errorf("validate() = %v, escalation %q; want nil, %q", err, got, tc.escalation)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("validate() = %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}
