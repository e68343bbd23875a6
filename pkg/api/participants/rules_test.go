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

package participants

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAddedBy(t *testing.T) {
	got := AddedBy(map[string]string{
		MarkPrefix + "surge":  "deployment.apps.k8s.io,evictionrequest.github.io/surge",
		MarkPrefix + "backup": " backup.example.com , ,surge-twin.example.com",
		MarkPrefix + "twin":   "surge-twin.example.com",
		MarkPrefix + "none":   "",
		"evictionrequest.coordination.k8s.io/interceptors":               "deployment.apps.k8s.io,own.example.com",
		"example.com/participants.evictionrequest.coordination.k8s.io/x": "spoof.example.com",
	})
	want := map[string]string{
		"deployment.apps.k8s.io":          "surge",
		"evictionrequest.github.io/surge": "surge",
		"backup.example.com":              "backup",
		"surge-twin.example.com":          "backup",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AddedBy() (-want +got):\n%s", diff)
	}
	if PolicyName("surge") != "evictionrequest-participants-surge" {
		t.Errorf("PolicyName(surge) = %s", PolicyName("surge"))
	}
}
