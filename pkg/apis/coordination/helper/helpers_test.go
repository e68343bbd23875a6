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

package helper

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

func TestHeartbeatDeadline(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	last := metav1.NewTime(created.Add(7 * time.Minute))
	defaultDeadline := time.Duration(coordination.DefaultHeartbeatDeadlineSeconds) * time.Second
	tests := []struct {
		name      string
		heartbeat *metav1.Time
		seconds   *int32
		want      time.Time
	}{
		{name: "no heartbeat, the default: from the creation", want: created.Add(defaultDeadline)},
		{name: "no heartbeat, set: from the creation", seconds: ptr.To[int32](600), want: created.Add(10 * time.Minute)},
		{name: "a heartbeat, the default: from the heartbeat", heartbeat: &last, want: last.Add(defaultDeadline)},
		{name: "a heartbeat, set: from the heartbeat", heartbeat: &last, seconds: ptr.To[int32](600), want: last.Add(10 * time.Minute)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := HeartbeatDeadline(tc.heartbeat, created, tc.seconds); !got.Equal(tc.want) {
				t.Errorf("HeartbeatDeadline() = %s, want %s", got, tc.want)
			}
		})
	}
}
