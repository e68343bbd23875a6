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

package localcluster

import (
	"strings"
	"testing"
)

func TestReportsLeader(t *testing.T) {
	for name, tc := range map[string]struct {
		metrics string
		want    bool
	}{
		"the leader": {`# TYPE leader_election_master_status gauge
leader_election_master_status{name="evictionrequest-apiserver"} 1
`, true},
		"a standby": {`leader_election_master_status{name="evictionrequest-apiserver"} 0
`, false},
		"no election": {`apiserver_request_total{code="200"} 1
`, false},
		"another metric of the same prefix": {`leader_election_master_status_other{name="x"} 1
`, false},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := reportsLeader(strings.NewReader(tc.metrics))
			if err != nil || got != tc.want {
				t.Errorf("reportsLeader = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
