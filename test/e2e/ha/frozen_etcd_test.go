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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// TestControllerRecoversFromAFrozenClusterEtcd freezes kube-apiserver's etcd
// for 20 s while a request waits for its eviction: every call of the
// controller to the cluster hangs until its timeout, and the leader's Lease
// cannot be renewed. Within seconds of the thaw the controller leads again
// and evicts the pod, once.
func TestControllerRecoversFromAFrozenClusterEtcd(t *testing.T) {
	ns := f.NewNamespace(t)
	pod := f.CreatePod(t, ns, "web-0", framework.PodOptions{})

	etcd := f.KubeEtcd()
	if err := etcd.Freeze(); err != nil {
		t.Fatal(err)
	}
	frozenAt := time.Now()
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			if err := etcd.Thaw(); err != nil {
				t.Errorf("thawing kube-apiserver's etcd: %v", err)
			}
		}
	}
	t.Cleanup(thaw)

	// The request is stored in our own etcd, so it can be made while the
	// cluster's is frozen.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := f.EvictionRequests(ns).Create(ctx, framework.NewEvictionRequest(pod, "nodemaintenance.k8s.io"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the EvictionRequest while kube-apiserver's etcd is frozen: %v", err)
	}
	time.Sleep(time.Until(frozenAt.Add(20 * time.Second)))
	thaw()
	thawedAt := time.Now()

	framework.Eventually(t, 2*time.Minute, "the pod to be evicted", func(ctx context.Context) error {
		_, err := f.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("pod still there: %v", err)
	})
	framework.Eventually(t, 2*time.Minute, "the request to complete", func(ctx context.Context) error {
		er, err := f.EvictionRequests(ns).Get(ctx, string(pod.UID), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(er.Status.Conditions, string(v1alpha1.EvictionRequestComplete)) {
			return fmt.Errorf("not complete: %s", er.Status.Message)
		}
		return nil
	})
	recovery := time.Since(thawedAt)
	t.Logf("the pod was evicted and the request completed %s after the thaw", recovery.Round(100*time.Millisecond))
	if recovery > 30*time.Second {
		t.Errorf("the controller took %s to recover after the thaw", recovery)
	}
	if _, granted := f.AuditedEvictions(t, ns, pod.Name); granted != 1 {
		t.Errorf("kube-apiserver granted %d evictions of the pod, want exactly one", granted)
	}
}
