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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// TestOwnedByThePodIsGarbageCollected has a requester let the garbage
// collector delete its EvictionRequest: kube-controller-manager, watching our
// resource through the aggregator, deletes it once the owning pod is gone.
func TestOwnedByThePodIsGarbageCollected(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	pod := parkedPod(t, ns, "batch-0")
	er := framework.NewEvictionRequest(pod, "nodemaintenance.k8s.io")
	er.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, BlockOwnerDeletion: ptr.To(false)}}
	if _, err := f.EvictionRequests(ns).Create(ctx, er, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The garbage collector rediscovers resources every 30 seconds; a
	// resource it has not yet watched can take that long to be collected.
	framework.Eventually(t, 2*time.Minute, "the garbage collector to delete the EvictionRequest", func(ctx context.Context) error {
		_, err := f.EvictionRequests(ns).Get(ctx, er.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
}
