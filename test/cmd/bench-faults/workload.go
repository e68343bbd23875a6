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
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// The participants of the workload: one that answers after a while, one
// that never answers (our API's interceptors, lifecycle's responders, whose
// names are domain-prefixed keys), and the surge interceptor of one-replica
// Deployments.
const (
	slowParticipant   = "slow.faults.example.com"
	silentParticipant = "silent.faults.example.com"
	slowResponder     = "faults.example.com/slow"
	silentResponder   = "faults.example.com/silent"
	poolLabel         = "faults.evictionrequest.example.com/pool"
	appLabel          = "app"
)

// podKind is one kind of pod of the workload.
type podKind int

const (
	podSlow podKind = iota
	podSilent
	podPlain
	podKinds
)

// createWorkload creates, with the participants of f, on each node to
// drain, podsPerNode pods cycling
// through the kinds (slow participant, silent participant, plain) and one
// one-replica Deployment under the surge interceptor, and a Deployment of
// one pod per node under a PodDisruptionBudget of one down at a time;
// silentOK says which nodes' drains have a deadline that escalates, the
// only ones a silent participant may hold. It waits until every pod runs.
func createWorkload(ctx context.Context, f flavour, client kubernetes.Interface, ns string, nodes []string, podsPerNode int, silentOK map[string]bool) error {
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns, Labels: map[string]string{bridge.NamespaceLabel: bridge.NamespaceOptIn}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for i, node := range nodes {
		for j := range podsPerNode {
			kind := podKind((i + j) % int(podKinds))
			if kind == podSilent && !silentOK[node] {
				kind = podSlow
			}
			if err := createPod(ctx, f, client, ns, fmt.Sprintf("p-%d-%d", i, j), node, kind); err != nil {
				return err
			}
		}
		if err := createDeployment(ctx, f, client, ns, fmt.Sprintf("solo-%d", i), 1, f.surge); err != nil {
			return err
		}
	}
	// A Deployment of a pod per node under a budget of one down at once.
	if err := createDeployment(ctx, f, client, ns, "budgeted", int32(len(nodes)), ""); err != nil {
		return err
	}
	budget := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "budgeted", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: "budgeted"}},
		},
	}
	if _, err := client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, budget, metav1.CreateOptions{}); err != nil {
		return err
	}
	return waitRunning(ctx, client, ns)
}

func createPod(ctx context.Context, f flavour, client kubernetes.Interface, ns, name, node string, kind podKind) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{}},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	switch kind {
	case podSlow:
		pod.Labels[appLabel] = "slow"
		f.declare(&pod.Annotations, &pod.Spec, f.slow)
	case podSilent:
		pod.Labels[appLabel] = "silent"
		f.declare(&pod.Annotations, &pod.Spec, f.silent)
	default:
		pod.Labels[appLabel] = "plain"
	}
	_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

// createDeployment creates a Deployment of replicas on the campaign's
// nodes, its pods declaring participant when it is not empty.
func createDeployment(ctx context.Context, f flavour, client kubernetes.Interface, ns, name string, replicas int32, participant string) error {
	labels := map[string]string{appLabel: name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{poolLabel: ns},
					Containers:   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
				},
			},
		},
	}
	if participant != "" {
		f.declare(&d.Spec.Template.Annotations, &d.Spec.Template.Spec, participant)
	}
	_, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	return err
}

// waitRunning waits until every pod of ns runs and is ready, and every
// Deployment has its replicas ready.
func waitRunning(ctx context.Context, client kubernetes.Interface, ns string) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			var waiting []string
			for _, p := range pods.Items {
				if !ready(&p) {
					waiting = append(waiting, p.Name)
				}
			}
			deployments, err := client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, d := range deployments.Items {
				if d.Status.ReadyReplicas != *d.Spec.Replicas {
					waiting = append(waiting, "deployment "+d.Name)
				}
			}
			if len(waiting) == 0 && len(pods.Items) > 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("pods not ready after 5m: %s", strings.Join(waiting, ", "))
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
