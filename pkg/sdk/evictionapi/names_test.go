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

package evictionapi

import "testing"

// Each API names its participants by its own rule, which the flags of the
// binaries state and check; before the API is known, a name of either will
// do.
func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		api  API
		name string
		ok   bool
	}{
		{Coordination, "maintenance.example.com", true},
		{Coordination, "example.com/drain", false},
		{Coordination, "Upper.example.com", false},
		{Lifecycle, "example.com/drain", true},
		{Lifecycle, "maintenance.example.com", false},
		{Lifecycle, "k8s.io/drain", false},
		{Auto, "maintenance.example.com", true},
		{Auto, "example.com/drain", true},
		{Auto, "Upper/drain", false},
	} {
		if err := tc.api.ValidateName(tc.name); (err == nil) != tc.ok {
			t.Errorf("%s.ValidateName(%q) = %v, want valid: %v", tc.api, tc.name, err, tc.ok)
		}
	}
	if Coordination.NameRule() == Lifecycle.NameRule() {
		t.Error("both APIs state one rule")
	}
}
