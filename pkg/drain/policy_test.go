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

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

// A drain refuses what kubectl drain refuses without its overrides, and
// evicts it, listed as overridden, with them.
func TestPolicyRefusesBarePodsAndEmptyDirPods(t *testing.T) {
	bare := wrappers.MakePod("bare").Obj()
	cache := wrappers.MakePod("cache").OwnedBy("apps/v1", "ReplicaSet", "cache", "uid-rs").EmptyDir("scratch").Obj()
	managed := wrappers.MakePod("web").OwnedBy("apps/v1", "ReplicaSet", "web", "uid-rs-web").Obj()
	pods := []*corev1.Pod{bare, cache, managed, wrappers.MakePod("fluentd").DaemonSet().EmptyDir("logs").Obj()}
	for _, tc := range []struct {
		name             string
		policy           Policy
		evict            int
		refused          map[RefuseReason]string
		overriddenForced int
	}{
		{"kubectl drain's defaults", Policy{}, 1, map[RefuseReason]string{RefuseUnmanaged: "bare", RefuseEmptyDir: "cache"}, 0},
		{"--force", Policy{Force: true}, 2, map[RefuseReason]string{RefuseEmptyDir: "cache"}, 1},
		{"--force --delete-emptydir-data", Policy{Force: true, DeleteEmptyDirData: true}, 3, map[RefuseReason]string{}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Select(pods, tc.policy)
			if len(s.Evict) != tc.evict {
				t.Errorf("%d pods to evict, want %d", len(s.Evict), tc.evict)
			}
			for _, reason := range RefuseReasons {
				got := ""
				if pods := s.Refused[reason]; len(pods) > 0 {
					got = pods[0].Name
				}
				if got != tc.refused[reason] {
					t.Errorf("refused %q: %q, want %q", reason, got, tc.refused[reason])
				}
			}
			if got := len(s.Overridden[RefuseUnmanaged]); got != tc.overriddenForced {
				t.Errorf("%d pods evicted only by --force, want %d", got, tc.overriddenForced)
			}
			if (s.RefusedError(func(RefuseReason) string { return "flag" }) == nil) != (len(tc.refused) == 0) {
				t.Errorf("RefusedError() disagrees with the refused pods %v", s.Refused)
			}
			if got := len(s.Skipped[SkipDaemonSet]); got != 1 {
				t.Errorf("the DaemonSet pod is not skipped, whatever its volumes: %v", s.Skipped)
			}
		})
	}
}
