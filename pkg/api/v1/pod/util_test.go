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

package pod

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

func TestWhyNotEvictable(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want NotEvictable
	}{
		{"a bare pod is evictable", wrappers.MakePod("bare").Obj(), ""},
		{"a ReplicaSet pod is evictable", wrappers.MakePod("web").OwnedBy("apps/v1", "ReplicaSet", "web", "rs").Obj(), ""},
		{"a DaemonSet pod is not", wrappers.MakePod("fluentd").DaemonSet().Obj(), DaemonSetPod},
		{"a DaemonSet of another group is not apps' DaemonSet", wrappers.MakePod("other").OwnedBy("example.com/v1", "DaemonSet", "ds", "x").Obj(), ""},
		{"a DaemonSet owner that is not the controller does not count", func() *corev1.Pod {
			p := wrappers.MakePod("ref").DaemonSet().Obj()
			p.OwnerReferences[0].Controller = nil
			return p
		}(), ""},
		{"a mirror pod is not", wrappers.MakePod("etcd").Mirror().Obj(), MirrorPod},
		{"a succeeded pod is not", wrappers.MakePod("job").Phase(corev1.PodSucceeded).Obj(), TerminalPod},
		{"a failed pod is not", wrappers.MakePod("crashed").Phase(corev1.PodFailed).Obj(), TerminalPod},
		{"a pending pod is evictable", wrappers.MakePod("starting").Phase(corev1.PodPending).Obj(), ""},
		{"a terminating pod is evictable: it is done once gone", wrappers.MakePod("leaving").Terminating(time.Now()).Obj(), ""},
		{"a mirror pod of a DaemonSet counts as mirror", wrappers.MakePod("both").DaemonSet().Mirror().Obj(), MirrorPod},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WhyNotEvictable(tc.pod); got != tc.want {
				t.Errorf("WhyNotEvictable() = %q, want %q", got, tc.want)
			}
		})
	}
}
