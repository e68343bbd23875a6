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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func pod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name)},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func ownedBy(apiVersion, kind string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "owner", UID: "owner-uid", Controller: ptr.To(true)})
	}
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}

func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want SkipReason
	}{
		{"a bare pod is evicted", pod("bare"), ""},
		{"a ReplicaSet pod is evicted", pod("web", ownedBy("apps/v1", "ReplicaSet")), ""},
		{"a DaemonSet pod is skipped", pod("fluentd", ownedBy("apps/v1", "DaemonSet")), SkipDaemonSet},
		{"a DaemonSet of another group is not apps' DaemonSet", pod("other", ownedBy("example.com/v1", "DaemonSet")), ""},
		{"a non-controller DaemonSet owner does not count", pod("ref", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "x"}}
		}), ""},
		{"a mirror pod is skipped", pod("etcd", func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
		}), SkipMirror},
		{"a succeeded pod is skipped", pod("job", phase(corev1.PodSucceeded)), SkipTerminal},
		{"a failed pod is skipped", pod("crashed", phase(corev1.PodFailed)), SkipTerminal},
		{"a pending pod is evicted", pod("starting", phase(corev1.PodPending)), ""},
		{"a terminating pod gets a request too", pod("leaving", func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()) }), ""},
		{"a mirror pod of a DaemonSet counts as mirror", pod("both", ownedBy("apps/v1", "DaemonSet"), func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
		}), SkipMirror},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Skip(tc.pod); got != tc.want {
				t.Errorf("Skip() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSelectSortsAndGroups(t *testing.T) {
	pods := []*corev1.Pod{
		pod("web-1"), pod("fluentd", ownedBy("apps/v1", "DaemonSet")), pod("web-0"),
		pod("job", phase(corev1.PodSucceeded)), pod("a-ds", ownedBy("apps/v1", "DaemonSet")),
	}
	pods[0].Namespace = "zoo"
	s := Select(pods)
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
	if got, want := s.SkippedSummary(), "2 DaemonSet-managed, 1 terminal"; got != want {
		t.Errorf("SkippedSummary() = %q, want %q", got, want)
	}
	if got := (Selection{}).SkippedSummary(); got != "" {
		t.Errorf("SkippedSummary() of nothing skipped = %q", got)
	}
}
