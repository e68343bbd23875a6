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

// Command evict-node evicts every pod of a node directly through the
// Eviction API (policy/v1), as a drain without EvictionRequests would at
// the rate of kubectl evictionrequest drain: the same client QPS and burst,
// the same number of calls in flight (drain.DefaultParallelism), a 429 (a
// PodDisruptionBudget) asked again after a pause, and waits until every pod
// is gone. It is bench-drain's baseline: what the control plane itself
// takes to evict the pods, which no drain through requests can beat.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/spf13/pflag"

	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

func main() {
	fs := pflag.NewFlagSet("evict-node", pflag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "Kubeconfig of the cluster.")
	node := fs.String("node", "", "The node whose pods are evicted.")
	timeout := fs.Duration("timeout", 15*time.Minute, "How long to wait for the pods to be gone.")
	// The plugin's client: kubectl-evictionrequest's defaults.
	client := options.NewClientOptions(100, 200)
	client.AddFlags(fs, "the evictions")
	_ = fs.Parse(os.Args[1:])
	if *node == "" {
		fmt.Fprintln(os.Stderr, "usage: evict-node --kubeconfig=FILE --node=NODE")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *kubeconfig, *node, client); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// run evicts the pods of node and waits until they are gone.
func run(ctx context.Context, kubeconfig, node string, client *options.ClientOptions) error {
	config, err := client.Config(kubeconfig, "evict-node")
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	byNode := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()}
	listCtx, cancel := context.WithTimeout(ctx, client.CallTimeout)
	pods, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(listCtx, byNode)
	cancel()
	if err != nil {
		return err
	}
	errs := make([]error, len(pods.Items))
	workqueue.ParallelizeUntil(ctx, drain.DefaultParallelism, len(pods.Items), func(i int) {
		errs[i] = evict(ctx, kube, &pods.Items[i], client.CallTimeout)
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	fmt.Printf("evicted %d pods of node %s\n", len(pods.Items), node)
	return wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		callCtx, cancel := context.WithTimeout(ctx, client.CallTimeout)
		defer cancel()
		left, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(callCtx, byNode)
		return err == nil && len(left.Items) == 0, nil
	})
}

// evict evicts pod, asking again after a 429 as kubectl drain does.
func evict(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod, timeout time.Duration) error {
	eviction := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
	}
	return wait.PollUntilContextCancel(ctx, drain.DefaultRetryAfter, true, func(ctx context.Context) (bool, error) {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		err := kube.CoreV1().Pods(pod.Namespace).EvictV1(callCtx, eviction)
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return true, nil
		case apierrors.IsTooManyRequests(err):
			return false, nil
		}
		return false, fmt.Errorf("evicting pod %s/%s: %w", pod.Namespace, pod.Name, err)
	})
}
