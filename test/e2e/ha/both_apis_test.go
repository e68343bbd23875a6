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

package ha

import (
	"context"
	"fmt"
	"testing"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// TestBothAPIsActInOneNamespace installs both APIs' controllers in one
// namespace, as docs/upstream.md's "Running both" tells admins to:
// evictionrequest-apiserver's (the ha overlay) and evictionrequest-controller
// (the lifecycle overlay). Each holds a Lease of its own, and each acts on
// its API: a pod is evicted through each.
func TestBothAPIsActInOneNamespace(t *testing.T) {
	leases := f.Kube.CoordinationV1().Leases("evictionrequest-system")
	holders := map[string]string{}
	for _, name := range []string{controllerLease, lifecycleLease} {
		framework.Eventually(t, time.Minute, "a holder of Lease "+name, func(ctx context.Context) error {
			lease, err := leases.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if holders[name] = ptr.Deref(lease.Spec.HolderIdentity, ""); holders[name] == "" {
				return fmt.Errorf("no holder")
			}
			return nil
		})
	}
	if holders[controllerLease] == holders[lifecycleLease] {
		t.Errorf("one identity %q holds both Leases", holders[controllerLease])
	}

	ns := f.NewNamespace(t)
	ours := f.CreatePod(t, ns, "ours", framework.PodOptions{})
	f.CreateEvictionRequest(t, ours, "nodemaintenance.k8s.io")
	f.WaitForCompletion(t, ns, string(ours.UID), v1alpha1.CompleteReasonPodDeleted)

	theirs := f.CreatePod(t, ns, "theirs", framework.PodOptions{})
	// The request outlives the pod, and its Eviction with it, to be read.
	framework.RequestEviction(t, f.NewLifecycleRequester(t, "e2e.example.com/both-apis", requester.Options{KeepAfterPod: true}), theirs)
	f.WaitForEviction(t, theirs, "the pod evicted through lifecycle.k8s.io",
		framework.ConditionIs(lifecyclev1alpha1.EvictionConditionTargetEvicted, lifecyclev1alpha1.EvictionConditionReasonPodDeleted))
	f.WaitForPodGone(t, ns, theirs.Name)
	for _, pod := range []string{ours.Name, theirs.Name} {
		if _, granted := f.AuditedEvictions(t, ns, pod); granted != 1 {
			t.Errorf("pod %s: %d evictions granted, want 1", pod, granted)
		}
	}
}
