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
	"github.com/evictionrequest/apiserver/pkg/drain"
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

// kwok's status heartbeat renews the conditions of the kubelet it stands
// for, and no other writer's: it renders its patch from the Node as it saw
// it when it queued the heartbeat, so renewing a drain's DrainInProgress
// wrote it back as it had been, over the drain's last word (seen on a
// loaded machine: kubectl evictionrequest drain's DrainInProgress=False put
// back to True two minutes after it exited).
func TestKwokNodesRenewOnlyTheirOwnConditions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	node := f.NewNode(t) // Ready: kwok renews its conditions from now on
	// A drain's condition, stamped an hour ago: a heartbeat that renewed it
	// would stamp it now.
	stamp := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	drained := corev1.NodeCondition{Type: corev1.NodeDrainInProgress, Status: corev1.ConditionFalse, Reason: "E2EDrainFailed", Message: "a drain of the e2e suite failed"}
	if _, err := drain.SetNodeConditions(ctx, f.Kube.CoreV1(), node, nil, stamp.Time, "e2e", drained); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	n := f.WaitForNode(t, node, "kwok's next heartbeat of node "+node, func(n *corev1.Node) error {
		if ready := drain.FindNodeCondition(n, corev1.NodeReady); ready == nil || !ready.LastHeartbeatTime.After(written) {
			return fmt.Errorf("Ready last renewed at %v, before %s", ready, written.Format(time.RFC3339))
		}
		return nil
	})
	got := drain.FindNodeCondition(n, corev1.NodeDrainInProgress)
	if got == nil || got.Status != drained.Status || got.Reason != drained.Reason ||
		!got.LastHeartbeatTime.Equal(&stamp) || !got.LastTransitionTime.Equal(&stamp) {
		t.Errorf("after kwok's heartbeat, DrainInProgress = %+v, want it as the drain wrote it at %s", got, stamp.Format(time.RFC3339))
	}
}

// nodeLease is the spec of node's Lease in kube-node-lease.
func nodeLease(ctx context.Context, node string) (coordinationv1.LeaseSpec, error) {
	lease, err := f.Kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return coordinationv1.LeaseSpec{}, err
	}
	return lease.Spec, nil
}
