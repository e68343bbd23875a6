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

package heartbeat

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDeadlineCountsFromTheLastHeartbeat(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	last := metav1.NewTime(start.Add(7 * time.Minute))
	if got, want := Deadline(nil, start, 20*time.Minute), start.Add(20*time.Minute); !got.Equal(want) {
		t.Errorf("without a heartbeat: %s, want %s", got, want)
	}
	if got, want := Deadline(ptr.To(last), start, 20*time.Minute), last.Add(20*time.Minute); !got.Equal(want) {
		t.Errorf("after a heartbeat: %s, want %s", got, want)
	}
}
