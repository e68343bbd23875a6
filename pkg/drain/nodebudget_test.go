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

package drain

import "testing"

func TestNodeBudget(t *testing.T) {
	for _, tc := range []struct {
		value string
		total int
		want  int
		err   bool
	}{
		{"", 10, 10, false},
		{"3", 10, 3, false},
		{"25%", 10, 3, false},
		{"1%", 10, 1, false},
		{"20", 10, 10, false},
		{"50%", 1, 1, false},
		{"3", 0, 0, false},
		{"0", 10, 0, true},
		{"-1", 10, 0, true},
		{"0%", 10, 0, true},
		{"-5%", 10, 0, true},
		{"three", 10, 0, true},
		{"03", 10, 0, true},
	} {
		budget, err := ParseNodeBudget(tc.value)
		if (err != nil) != tc.err {
			t.Errorf("ParseNodeBudget(%q): error %v, want an error %v", tc.value, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if got := budget.Of(tc.total); got != tc.want {
			t.Errorf("ParseNodeBudget(%q).Of(%d) = %d, want %d", tc.value, tc.total, got, tc.want)
		}
		if budget.String() != tc.value {
			t.Errorf("ParseNodeBudget(%q).String() = %q", tc.value, budget.String())
		}
	}
}
