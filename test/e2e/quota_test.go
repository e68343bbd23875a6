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
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// countRequests is the quota of EvictionRequests of our API in a namespace,
// as kube-apiserver names any resource's object count.
const countRequests = corev1.ResourceName("count/evictionrequests.coordination.k8s.io")

// A ResourceQuota of one EvictionRequest limits our API as it limits
// kube-apiserver's resources: the second request of the namespace is
// refused with kube-apiserver's quota message; the first, once its pod is
// gone and it completed, is deleted after the server's
// --completed-evictionrequest-ttl, which frees the quota for the second.
func TestAResourceQuotaLimitsRequestsAndCompletedOnesExpire(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	first, second := parkedPod(t, ns, "web-0"), parkedPod(t, ns, "web-1")
	// The first request is made before the quota, whose usage the test
	// then waits for kube-controller-manager's resourcequota controller to
	// count: its full syncs (every 15 s in the harness) count from an
	// informer's cache, which may not yet hold a request quota admission
	// counted a moment before, and would write the usage back to 0.
	done, err := f.EvictionRequests(ns).Create(ctx, framework.NewEvictionRequest(first, "descheduler.example.com"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "one-request"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{countRequests: resource.MustParse("1")}}}
	if _, err := f.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForQuotaUsage(t, ns, quota.Name, countRequests, 1)
	// The server's cache of quotas sees the status a moment later, as
	// kube-apiserver's does: until then a create is refused ("status
	// unknown for quota").
	framework.Eventually(t, time.Minute, "the server to know the quota's status", func(ctx context.Context) error {
		_, err = f.EvictionRequests(ns).Create(ctx, framework.NewEvictionRequest(second, "descheduler.example.com"), metav1.CreateOptions{})
		if err != nil && strings.Contains(err.Error(), "status unknown") {
			return err
		}
		return nil
	})
	if want := "exceeded quota: one-request, requested: count/evictionrequests.coordination.k8s.io=1, used: count/evictionrequests.coordination.k8s.io=1, limited: count/evictionrequests.coordination.k8s.io=1"; !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("the second request of a namespace with a quota of one: %v, want 403 %q", err, want)
	}

	if err := f.Kube.CoreV1().Pods(ns).Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForCompletion(t, ns, done.Name)
	framework.Eventually(t, completedTTL+time.Minute, "the completed request to be deleted after its TTL", func(ctx context.Context) error {
		_, err := f.EvictionRequests(ns).Get(ctx, done.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, errors.New("still there"))
	})
	framework.Eventually(t, time.Minute, "the second request once the quota is free", func(ctx context.Context) error {
		_, err := f.EvictionRequests(ns).Create(ctx, framework.NewEvictionRequest(second, "descheduler.example.com"), metav1.CreateOptions{})
		return err
	})
}
