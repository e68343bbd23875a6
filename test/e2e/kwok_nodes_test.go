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

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// The harness's kwok nodes have a Lease in kube-node-lease, which kwok
// renews as kubelets renew theirs: kube-controller-manager reads a node's
// health from its Lease, and without one a node that Karpenter changed
// three times went 50 s without a heartbeat and was marked unreachable.
func TestKwokNodesRenewTheirLeases(t *testing.T) {
	t.Parallel()
	node := f.NewNode(t)
	var first time.Time
	framework.Eventually(t, time.Minute, "kwok to hold the Lease of node "+node, func(ctx context.Context) error {
		spec, err := nodeLease(ctx, node)
		if err != nil {
			return err
		}
		// kwok holds it under its own identity, not the node's name.
		if spec.HolderIdentity == nil || *spec.HolderIdentity == "" || spec.RenewTime == nil ||
			spec.LeaseDurationSeconds == nil || *spec.LeaseDurationSeconds != localcluster.KwokNodeLeaseSeconds {
			return fmt.Errorf("the Lease is not held for %d s: %+v", localcluster.KwokNodeLeaseSeconds, spec)
		}
		first = spec.RenewTime.Time
		return nil
	})
	// kwok renews a Lease every quarter of its duration, as the kubelet.
	framework.Eventually(t, time.Minute, "kwok to renew the Lease of node "+node, func(ctx context.Context) error {
		spec, err := nodeLease(ctx, node)
		if err == nil && (spec.RenewTime == nil || !spec.RenewTime.After(first)) {
			err = fmt.Errorf("renewed last at %s", spec.RenewTime)
		}
		return err
	})
}

// nodeLease is the spec of node's Lease in kube-node-lease.
func nodeLease(ctx context.Context, node string) (coordinationv1.LeaseSpec, error) {
	lease, err := f.Kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return coordinationv1.LeaseSpec{}, err
	}
	return lease.Spec, nil
}
