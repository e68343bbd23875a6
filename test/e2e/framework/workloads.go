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
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// PoolLabel keeps the pods of a test's Deployments on the test's own nodes,
// labelled with the test's namespace. It is Karpenter's label of a
// NodePool's nodes: the NodePool of a Karpenter test, named after its
// namespace, is its pool, and the suite's declarative node drain budgets
// drains per value of it (NodeDrainArgs), as docs/drains.md has admins do.
const PoolLabel = localcluster.NodePoolLabel

// PoolNode creates a node of the test in its pool.
func (f *Framework) PoolNode(t testing.TB, ns string) string {
	t.Helper()
	name := f.NewNode(t)
	f.PatchNode(t, name, map[string]any{"metadata": map[string]any{"labels": map[string]any{PoolLabel: ns}}})
	return name
}

// PatchNode merge-patches the node name.
func (f *Framework) PatchNode(t testing.TB, name string, patch map[string]any) {
	t.Helper()
	data, _ := json.Marshal(patch)
	if _, err := f.Kube.CoreV1().Nodes().Patch(t.Context(), name, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Cordon marks the node name unschedulable.
func (f *Framework) Cordon(t testing.TB, name string) {
	t.Helper()
	f.PatchNode(t, name, map[string]any{"spec": map[string]any{"unschedulable": true}})
}

// CreateDeployment creates a Deployment of the test's pool, opted in to
// interceptor (none when empty), with maxSurge 1 and maxUnavailable 0, and
// waits until it is available.
func (f *Framework) CreateDeployment(t testing.TB, ns, name string, replicas int32, interceptorName string, mutate func(*appsv1.Deployment)) *appsv1.Deployment {
	t.Helper()
	dep, err := f.Kube.AppsV1().Deployments(ns).Create(t.Context(), NewDeployment(ns, name, replicas, interceptorName, mutate), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.WaitForReplicas(t, ns, name, replicas)
	return dep
}

// NewDeployment is the Deployment CreateDeployment creates.
func NewDeployment(ns, name string, replicas int32, interceptorName string, mutate func(*appsv1.Deployment)) *appsv1.Deployment {
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{PoolLabel: ns},
			Containers:   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if interceptorName != "" {
		template.Annotations = map[string]string{v1alpha1.PodInterceptorsAnnotation: interceptorName}
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template,
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			}},
		},
	}
	if mutate != nil {
		mutate(dep)
	}
	return dep
}

// WaitForReplicas waits until the Deployment asks for and has exactly
// replicas available pods and no surge of the interceptor.
func (f *Framework) WaitForReplicas(t testing.TB, ns, name string, replicas int32) *appsv1.Deployment {
	t.Helper()
	return f.WaitForDeployment(t, ns, name, fmt.Sprintf("Deployment %s at %d available replicas", name, replicas), func(dep *appsv1.Deployment) error {
		s := dep.Status
		if *dep.Spec.Replicas != replicas || s.ObservedGeneration != dep.Generation || s.Replicas != replicas || s.AvailableReplicas != replicas || s.UpdatedReplicas != replicas {
			return fmt.Errorf("spec %d, status %+v", *dep.Spec.Replicas, s)
		}
		if _, ok := dep.Annotations[surge.StateAnnotation]; ok {
			return fmt.Errorf("a surge is in progress: %s", dep.Annotations[surge.StateAnnotation])
		}
		return nil
	})
}

// PodsOf lists the pods labelled app=app in ns.
func (f *Framework) PodsOf(t testing.TB, ns, app string) []corev1.Pod {
	t.Helper()
	pods, err := f.Kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// ReadyWatcher follows the pods of an app through a watch, in the order
// kube-apiserver saw the changes, and records the fewest Ready pods and the
// most live pods there ever were.
type ReadyWatcher struct {
	mu                sync.Mutex
	ready, live       map[types.UID]bool
	minReady, maxLive int
	stop              context.CancelFunc
	done              chan struct{}
}

func (f *Framework) WatchReady(t testing.TB, ns, app string) *ReadyWatcher {
	t.Helper()
	w := &ReadyWatcher{ready: map[types.UID]bool{}, live: map[types.UID]bool{}, minReady: -1, done: make(chan struct{})}
	factory := informers.NewSharedInformerFactoryWithOptions(f.Kube, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = labels.Set{"app": app}.String() }))
	informer := factory.Core().V1().Pods().Informer()
	observe := func(obj any, deleted bool) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			if tombstone, isTombstone := obj.(cache.DeletedFinalStateUnknown); isTombstone {
				pod, ok = tombstone.Obj.(*corev1.Pod)
			}
			if !ok {
				return
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		live := !deleted && pod.DeletionTimestamp == nil
		w.live[pod.UID] = live
		w.ready[pod.UID] = live && IsReady(pod)
		w.record()
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(obj, false) },
		UpdateFunc: func(_, obj any) { observe(obj, false) },
		DeleteFunc: func(obj any) { observe(obj, true) },
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the pod watch did not sync")
	}
	// The pods of the initial list arrive one by one: the extremes count
	// from the state once all of them are in.
	w.mu.Lock()
	w.minReady, w.maxLive = -1, 0
	w.record()
	w.mu.Unlock()
	go func() {
		<-ctx.Done()
		factory.Shutdown()
		close(w.done)
	}()
	t.Cleanup(w.Stop)
	return w
}

// IsReady is true when pod's Ready condition is true.
func IsReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (w *ReadyWatcher) record() {
	ready, live := 0, 0
	for uid := range w.live {
		if w.live[uid] {
			live++
		}
		if w.ready[uid] {
			ready++
		}
	}
	if w.minReady < 0 || ready < w.minReady {
		w.minReady = ready
	}
	w.maxLive = max(w.maxLive, live)
}

// Stop ends the watch.
func (w *ReadyWatcher) Stop() {
	w.stop()
	<-w.done
}

// Extremes are the fewest Ready pods and the most live pods seen so far.
func (w *ReadyWatcher) Extremes() (minReady, maxLive int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.minReady, w.maxLive
}

// PodNames are the names of pods.
func PodNames(pods []corev1.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name+"@"+p.Spec.NodeName)
	}
	return names
}

// CreatePDB creates a budget that keeps minAvailable pods labeled app=name
// and waits until kube-controller-manager has computed it.
func (f *Framework) CreatePDB(t testing.TB, ns, name string, minAvailable int32, expectedPods int32) *policyv1.PodDisruptionBudget {
	t.Helper()
	pdb, err := f.Kube.PolicyV1().PodDisruptionBudgets(ns).Create(t.Context(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(minAvailable)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, time.Minute, "the status of PDB "+name, func(ctx context.Context) error {
		pdb, err = f.Kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.ExpectedPods != expectedPods {
			return fmt.Errorf("status %+v", pdb.Status)
		}
		return nil
	})
	return pdb
}

// RelaxPDB lets the budget ns/name keep no pod (minAvailable 0). It
// patches the spec, as an admin's kubectl does: an update of a copy read
// earlier conflicts with kube-controller-manager's writes of its status.
func (f *Framework) RelaxPDB(t testing.TB, ns, name string) {
	t.Helper()
	patch := []byte(`{"spec":{"minAvailable":0}}`)
	if _, err := f.Kube.PolicyV1().PodDisruptionBudgets(ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// SkippedPods creates a DaemonSet pod and a mirror pod on node, which a
// drain leaves alone and the controller never evicts through the API.
func (f *Framework) SkippedPods(t testing.TB, ns, node string) (daemonPod, mirrorPod *corev1.Pod) {
	t.Helper()
	ds, err := f.Kube.AppsV1().DaemonSets(ns).Create(t.Context(), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "fluentd"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "fluentd"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "fluentd"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "fluentd", Image: "fluentd"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	daemonPod = f.CreatePod(t, ns, "fluentd-x", PodOptions{Node: node, Labels: map[string]string{"app": "fluentd"}, Mutate: func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}
	}})
	mirrorPod = f.CreatePod(t, ns, "etcd-static", PodOptions{Node: node, Mutate: func(p *corev1.Pod) {
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "static-pod-hash"}
	}})
	return daemonPod, mirrorPod
}
