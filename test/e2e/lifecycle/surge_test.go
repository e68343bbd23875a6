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

package lifecycle

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// A surge whose replacement cannot be scheduled waits rather than remove
// the only Ready pod; when the admin withdraws (kubectl evictionrequest
// request, then withdraw), the surge interceptor's janitor, which reads the
// pod's EvictionRequest to learn that no request holds the surge any more,
// scales the Deployment back and leaves the pod as it was.
func TestSurgeRevertsOnWithdrawal(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	only := f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "db", 1, "", func(dep *appsv1.Deployment) {
		dep.Spec.Template.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(surge.DefaultLifecycleName, lifecycleutil.ManagingControllerPriority)}
	})
	original := f.PodsOf(t, ns, "db")[0]
	// The pool's only node is cordoned: the replacement cannot be scheduled.
	f.Cordon(t, only)
	// As an admin asks, and then changes their mind: with the plugin.
	if r := f.RunCommand(t, time.Minute, pluginBinary, "request", "-n", ns, original.Name); r.Err != nil {
		t.Fatalf("request: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	f.WaitForDeployment(t, ns, "db", "the surge of db", func(dep *appsv1.Deployment) error {
		if _, ok := dep.Annotations[surge.StateAnnotation]; !ok || *dep.Spec.Replicas != 2 {
			return fmt.Errorf("replicas %d, annotations %v", *dep.Spec.Replicas, dep.Annotations)
		}
		return nil
	})
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, original.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the only Ready pod was removed: %v", err)
	}

	if r := f.RunCommand(t, time.Minute, pluginBinary, "withdraw", "-n", ns, original.Name); r.Err != nil {
		t.Fatalf("withdraw: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	f.CheckSurgeReverted(t, ns, "db", original.UID)
}
