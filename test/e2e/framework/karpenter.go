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

package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// KarpenterTaint keeps the pods of other tests off the nodes of a
// Karpenter test, and Karpenter from launching nodes of its NodePool for
// them: the NodePools of KarpenterNodePool taint their nodes with it, and
// OnKarpenterPool tolerates it.
const KarpenterTaint = "e2e.evictionrequest.example.com/karpenter"

// KarpenterTimeout bounds a wait for a decision of Karpenter's: its
// disruption controller looks every 10 seconds, validates a consolidation
// for 15 more, and launches and drains nodes in between.
const KarpenterTimeout = 4 * time.Minute

// KarpenterNodePool creates the NodePool of the test's namespace ns, named
// ns so that its nodes are the test's pool (PoolLabel=ns), their nodes
// tainted with KarpenterTaint, and deletes it when the test ends (Karpenter
// then removes its nodes).
func (f *Framework) KarpenterNodePool(t testing.TB, ns string, opts localcluster.KarpenterNodePoolOptions) {
	t.Helper()
	if f.Karpenter() == nil {
		t.Fatal("the suite runs no Karpenter (localcluster.Config.Karpenter)")
	}
	opts.Taints = append(opts.Taints, corev1.Taint{Key: KarpenterTaint, Effect: corev1.TaintEffectNoSchedule})
	if _, err := f.CreateKarpenterNodePool(t.Context(), localcluster.NewKarpenterNodePool(ns, opts)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = f.Dynamic.Resource(localcluster.NodePoolResource).Delete(ctx, ns, metav1.DeleteOptions{})
	})
}

// PatchNodePool merge-patches the NodePool name.
func (f *Framework) PatchNodePool(t testing.TB, name string, patch map[string]any) {
	t.Helper()
	data, _ := json.Marshal(patch)
	if _, err := f.Dynamic.Resource(localcluster.NodePoolResource).Patch(t.Context(), name, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// OnKarpenterPool is a mutation of NewDeployment: its pods tolerate
// KarpenterTaint and request cpu each, and then mutate (when not nil)
// applies.
func OnKarpenterPool(cpu string, mutate func(*appsv1.Deployment)) func(*appsv1.Deployment) {
	return func(dep *appsv1.Deployment) {
		spec := &dep.Spec.Template.Spec
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: KarpenterTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
		for i := range spec.Containers {
			spec.Containers[i].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
		if mutate != nil {
			mutate(dep)
		}
	}
}

// OptInToTheBridge labels ns so that the eviction API bridge acts in it.
func (f *Framework) OptInToTheBridge(t testing.TB, ns string) {
	t.Helper()
	f.MustKubectl(t, "label", "namespace", ns, bridge.NamespaceLabel+"="+bridge.NamespaceOptIn)
}

// WaitForNodeGone waits, at most timeout, until the node name no longer
// exists.
func (f *Framework) WaitForNodeGone(t testing.TB, name string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, "node "+name+" to be deleted", func(ctx context.Context) error {
		node, err := f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("it exists (deleting: %v, taints %v)", node.DeletionTimestamp != nil, node.Spec.Taints)
	})
}

// DeploymentWatcher follows every version of a Deployment through a watch
// and records the fewest ready replicas it ever had.
type DeploymentWatcher struct {
	mu       sync.Mutex
	minReady int32
	versions int
	failed   func() error
}

// WatchDeployment follows the Deployment ns/name from now until the test
// ends.
func (f *Framework) WatchDeployment(t testing.TB, ns, name string) *DeploymentWatcher {
	t.Helper()
	client := f.Kube.AppsV1().Deployments(ns)
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = byName
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = byName
			return client.Watch(ctx, opts)
		},
	}
	w := &DeploymentWatcher{minReady: -1}
	w.failed = follow(t, lw, func(event watch.EventType, obj runtime.Object) {
		dep, ok := obj.(*appsv1.Deployment)
		if !ok {
			return
		}
		ready := dep.Status.ReadyReplicas
		if event == watch.Deleted {
			ready = 0
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.versions++
		if w.minReady < 0 || ready < w.minReady {
			w.minReady = ready
		}
	})
	return w
}

// MinReady is the fewest ready replicas of every version seen so far, and
// how many versions were seen; it fails t if the watch failed.
func (w *DeploymentWatcher) MinReady(t testing.TB) (minReady int32, versions int) {
	t.Helper()
	if err := w.failed(); err != nil {
		t.Error(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.minReady, w.versions
}
