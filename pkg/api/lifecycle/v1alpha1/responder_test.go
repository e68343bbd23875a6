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

package v1alpha1

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestResponderMessageCutsOnACharacter(t *testing.T) {
	long := strings.Repeat("é", MaxResponderMessage+10)
	got := ResponderMessage(long)
	if n := utf8.RuneCountInString(got); n != MaxResponderMessage || !utf8.ValidString(got) {
		t.Errorf("ResponderMessage() has %d characters (valid UTF-8 %v), want %d", n, utf8.ValidString(got), MaxResponderMessage)
	}
	if short := "copying"; ResponderMessage(short) != short {
		t.Errorf("ResponderMessage(%q) changed it", short)
	}
}

func TestExpectedCompletionIsNeverPast(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if got := ExpectedCompletion(now.Add(-time.Minute), now); !got.Time.Equal(now) {
		t.Errorf("a past expected completion = %v, want now", got)
	}
	if got := ExpectedCompletion(now.Add(time.Minute), now); !got.Time.Equal(now.Add(time.Minute)) {
		t.Errorf("a future expected completion = %v, want it unchanged", got)
	}
}

func TestNextHeartbeatKeepsARecentOne(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	recent := metav1.NewTime(now.Add(-MinHeartbeatInterval + time.Second))
	if got := NextHeartbeat(&recent, now); !got.Equal(&recent) {
		t.Errorf("a heartbeat %s after the last = %v, want the last kept", MinHeartbeatInterval-time.Second, got)
	}
	old := metav1.NewTime(now.Add(-MinHeartbeatInterval))
	if got := NextHeartbeat(&old, now); !got.Time.Equal(now) {
		t.Errorf("a heartbeat %s after the last = %v, want now", MinHeartbeatInterval, got)
	}
	if got := NextHeartbeat(nil, now); !got.Time.Equal(now) {
		t.Errorf("a first heartbeat = %v, want now", got)
	}
}

func TestResponderDeadlineCountsFromTheLastHeartbeat(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	last := metav1.NewTime(start.Add(7 * time.Minute))
	if got, want := ResponderDeadline(nil, start, 20*time.Minute), start.Add(20*time.Minute); !got.Equal(want) {
		t.Errorf("without a heartbeat: %s, want %s", got, want)
	}
	if got, want := ResponderDeadline(ptr.To(last), start, 20*time.Minute), last.Add(20*time.Minute); !got.Equal(want) {
		t.Errorf("after a heartbeat: %s, want %s", got, want)
	}
}
