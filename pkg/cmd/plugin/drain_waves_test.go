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

import "testing"

func TestParseMaxConcurrentNodes(t *testing.T) {
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
		{"0", 10, 0, true},
		{"-1", 10, 0, true},
		{"0%", 10, 0, true},
		{"three", 10, 0, true},
	} {
		got, err := parseMaxConcurrentNodes(tc.value, tc.total)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseMaxConcurrentNodes(%q, %d) = %d, %v; want %d, error %v", tc.value, tc.total, got, err, tc.want, tc.err)
		}
	}
}
