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

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// callTimeout bounds one call to kube-apiserver.
const callTimeout = 30 * time.Second

// roleLabel marks the pods of the db Deployments, which keep apart.
const roleLabel = "bench.evictionrequest.github.io/role"

// consolidated is what one consolidation measured.
type consolidated struct {
	// Case is "bridge" (the namespace opted in) or "no-bridge".
	Case string `json:"case"`
	// Seconds is the time from the deletion of the fillers, which leaves
	// the nodes underutilized, until every one of them was gone and every
	// Deployment had its replica available again.
	Seconds float64 `json:"seconds"`
	// MinReady is the fewest ready replicas any Deployment had meanwhile,
	// and AtZero how many of them were ever at zero.
	MinReady int32 `json:"minReady"`
	AtZero   int   `json:"deploymentsAtZero"`
}

func caseName(throughBridge bool) string {
	if throughBridge {
		return "bridge"
	}
	return "no-bridge"
}

// consolidate has Karpenter launch o.nodes nodes of a NodePool of its own,
// each for a one-replica Deployment the surge interceptor guards (db-N)
// and a filler that takes most of the node (filler-N), then deletes the
// fillers: every node is now underutilized, and Karpenter replaces each
// with a cheaper one (the db pods keep apart), evicting the db pods. It returns once every node is
// gone and every db Deployment is available again.
func consolidate(ctx context.Context, cluster *localcluster.Cluster, o options, throughBridge bool) (consolidated, error) {
	logger := klog.FromContext(ctx)
	c := consolidated{Case: caseName(throughBridge)}
	ns := "karpenter-" + c.Case
	labels := map[string]string{}
	if throughBridge {
		labels[bridge.NamespaceLabel] = bridge.NamespaceOptIn
	}
	if err := call(ctx, func(ctx context.Context) error {
		_, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return c, err
	}
	defer benchutil.DeleteNamespace(ctx, cluster.Client, ns)
	if _, err := cluster.CreateKarpenterNodePool(ctx, localcluster.NewKarpenterNodePool(ns, localcluster.KarpenterNodePoolOptions{ConsolidateAfter: "5s", Budget: o.budget})); err != nil {
		return c, err
	}
	defer deleteNodePool(ctx, cluster, ns)

	nodes := make([]string, 0, o.nodes)
	for i := range o.nodes {
		node, err := launchPair(ctx, cluster.Client, o, ns, i)
		if err != nil {
			return c, err
		}
		nodes = append(nodes, node)
	}
	logger.Info("Karpenter launched the nodes", "case", c.Case, "nodes", nodes)
	readiness, err := watchReadiness(ctx, cluster.Client, ns)
	if err != nil {
		return c, err
	}
	defer readiness.stop()

	start := time.Now()
	for i := range o.nodes {
		if err := call(ctx, func(ctx context.Context) error {
			return cluster.Client.AppsV1().Deployments(ns).Delete(ctx, fmt.Sprintf("filler-%d", i), metav1.DeleteOptions{})
		}); err != nil {
			return c, err
		}
	}
	if err := waitConsolidated(ctx, cluster.Client, o, ns, nodes); err != nil {
		return c, err
	}
	c.Seconds = time.Since(start).Seconds()
	c.MinReady, c.AtZero = readiness.fewest()
	return c, nil
}

// launchPair creates db-i and filler-i together, one batch for Karpenter,
// which launches one node for both, and returns that node.
func launchPair(ctx context.Context, client kubernetes.Interface, o options, ns string, i int) (string, error) {
	db := deployment(ns, fmt.Sprintf("db-%d", i), "500m", func(t *corev1.PodTemplateSpec) {
		t.Annotations[localcluster.ReadyAfterAnnotation] = o.readyAfter.String()
		// One db pod per node: Karpenter consolidates by replacing each
		// node with a cheaper one, evicting every db pod once, rather than
		// by packing them all onto one of the nodes.
		t.Labels[roleLabel] = "db"
		t.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{roleLabel: "db"}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}}
		if o.api == "lifecycle" {
			t.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(surge.DefaultLifecycleName, lifecycleutil.ManagingControllerPriority)}
		} else {
			t.Annotations[v1alpha1.PodInterceptorsAnnotation] = surge.DefaultName
		}
	})
	filler := deployment(ns, fmt.Sprintf("filler-%d", i), "3", nil)
	for _, dep := range []*appsv1.Deployment{filler, db} {
		if err := call(ctx, func(ctx context.Context) error {
			_, err := client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{})
			return err
		}); err != nil {
			return "", err
		}
	}
	var node string
	err := poll(ctx, o.timeout, func(ctx context.Context) error {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		nodes := map[string]string{}
		for _, p := range pods.Items {
			if isReady(&p) {
				nodes[p.Labels["app"]] = p.Spec.NodeName
			}
		}
		if nodes[db.Name] == "" || nodes[filler.Name] == "" {
			return fmt.Errorf("%s and %s are not both Ready", db.Name, filler.Name)
		}
		if nodes[db.Name] != nodes[filler.Name] {
			return &permanentError{fmt.Errorf("karpenter put %s on %s and %s on %s; the benchmark needs one node of both", db.Name, nodes[db.Name], filler.Name, nodes[filler.Name])}
		}
		node = nodes[db.Name]
		return nil
	})
	return node, err
}

// waitConsolidated waits until none of nodes exists and every Deployment
// of ns has its replica available.
func waitConsolidated(ctx context.Context, client kubernetes.Interface, o options, ns string, nodes []string) error {
	return poll(ctx, o.timeout, func(ctx context.Context) error {
		for _, n := range nodes {
			if _, err := client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("node %s is still there (%v)", n, err)
			}
		}
		deps, err := client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, d := range deps.Items {
			if d.Status.AvailableReplicas != *d.Spec.Replicas || d.Status.Replicas != *d.Spec.Replicas {
				return fmt.Errorf("deployment %s: %d replicas, %d available, want %d", d.Name, d.Status.Replicas, d.Status.AvailableReplicas, *d.Spec.Replicas)
			}
		}
		return nil
	})
}

// deployment is a one-replica Deployment ns/name on the NodePool ns whose
// pod requests cpu, its template then changed by mutate when not nil.
func deployment(ns, name, cpu string, mutate func(*corev1.PodTemplateSpec)) *appsv1.Deployment {
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}, Annotations: map[string]string{}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{localcluster.NodePoolLabel: ns},
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		},
	}
	if mutate != nil {
		mutate(&template)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: template,
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			}},
		},
	}
}

// deleteNodePool deletes the NodePool name (Karpenter then removes its
// nodes), even once ctx is done.
func deleteNodePool(ctx context.Context, cluster *localcluster.Cluster, name string) {
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	if err := cluster.Dynamic.Resource(localcluster.NodePoolResource).Delete(callCtx, name, metav1.DeleteOptions{}); err != nil {
		klog.FromContext(ctx).Error(err, "Deleting the NodePool", "nodePool", name)
	}
}

func isReady(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// call runs f with a context bounded by callTimeout.
func call(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return f(ctx)
}

// poll calls condition every second, each call bounded by callTimeout,
// until it returns nil or timeout passes; the error then says what was
// still awaited.
func poll(ctx context.Context, timeout time.Duration, condition func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		var permanent *permanentError
		if last = condition(callCtx); errors.As(last, &permanent) {
			return false, permanent.err
		}
		return last == nil, nil
	})
	if err != nil && last != nil && ctx.Err() != nil {
		return fmt.Errorf("not done after %s: %w", timeout, last)
	}
	return err
}

// permanentError ends a poll at once.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
