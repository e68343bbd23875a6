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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

func TestSelectSortsAndGroups(t *testing.T) {
	pods := []*corev1.Pod{
		wrappers.MakePod("web-1").Namespace("zoo").Obj(),
		wrappers.MakePod("fluentd").DaemonSet().Obj(),
		wrappers.MakePod("web-0").Obj(),
		wrappers.MakePod("job").Phase(corev1.PodSucceeded).Obj(),
		wrappers.MakePod("a-ds").DaemonSet().Obj(),
		wrappers.MakePod("etcd").Mirror().Obj(),
	}
	s := Select(pods, Policy{Force: true})
	var evict []string
	for _, p := range s.Evict {
		evict = append(evict, p.Namespace+"/"+p.Name)
	}
	if diff := cmp.Diff([]string{"shop/web-0", "zoo/web-1"}, evict); diff != "" {
		t.Errorf("Evict (-want +got):\n%s", diff)
	}
	if got := []string{s.Skipped[SkipDaemonSet][0].Name, s.Skipped[SkipDaemonSet][1].Name}; got[0] != "a-ds" || got[1] != "fluentd" {
		t.Errorf("skipped DaemonSet pods in order %v", got)
	}
	if got, want := s.SkippedSummary(), "2 DaemonSet-managed, 1 mirror, 1 terminal"; got != want {
		t.Errorf("SkippedSummary() = %q, want %q", got, want)
	}
	if got := (Selection{}).SkippedSummary(); got != "" {
		t.Errorf("SkippedSummary() of nothing skipped = %q", got)
	}
}
