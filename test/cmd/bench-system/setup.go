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
	_ "embed"
	"errors"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

//go:embed crd.yaml
var crdManifest []byte

const (
	namespace = "bench"
	// interceptorName is listed by every pod, so that our controller selects
	// it after each create, as in a cluster where pods declare
	// interceptors, and then waits: nothing is evicted while measuring.
	interceptorName = "bench.example.com"
	requesterName   = "requester.bench.example.com"
	// secondRequesterName joins every request in the server-side apply
	// phase.
	secondRequesterName = "second.bench.example.com"
	serviceAccount      = "bench-writer"
)

// target is one of the two APIs under comparison.
type target struct {
	name string
	gvr  schema.GroupVersionResource
	// ours is evictionrequest-apiserver: admission fills spec.interceptors
	// and its controller selects the active interceptor after each create.
	ours bool
}

var targets = []target{
	{name: "ours", gvr: v1alpha1.SchemeGroupVersion.WithResource("evictionrequests"), ours: true},
	{name: "crd", gvr: schema.GroupVersionResource{Group: "bench.evictionrequest.io", Version: "v1alpha1", Resource: "evictionrequests"}},
}

// user is one identity the load runs as.
type user struct {
	name string
	// requests are the user's clients of each target, by target name.
	requests map[string]requests
}

// pod is a pod the EvictionRequests target.
type pod struct {
	name, uid string
}

// bench is the state of a run.
type bench struct {
	o       options
	cluster *localcluster.Cluster
	admin   *rest.Config
	kube    kubernetes.Interface
	users   []user
	pods    []pod
}

// clientConfig sets the load generator's limits on a copy of config.
func (o options) clientConfig(config *rest.Config) *rest.Config {
	config = rest.CopyConfig(config)
	config.QPS, config.Burst, config.Timeout = o.qps, o.burst, o.timeout
	return config
}

func setUp(ctx context.Context, o options, cluster *localcluster.Cluster, res *results) (*bench, error) {
	b := &bench{o: o, cluster: cluster, admin: o.clientConfig(cluster.AdminConfig)}
	var err error
	if b.kube, err = kubernetes.NewForConfig(b.admin); err != nil {
		return nil, err
	}
	if err := b.installCRD(ctx); err != nil {
		return nil, fmt.Errorf("installing the CRD: %w", err)
	}
	if _, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	saConfig, err := b.serviceAccountConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("setting up the service account: %w", err)
	}
	for _, u := range []struct {
		name   string
		config *rest.Config
	}{{"admin", b.admin}, {"service account", saConfig}} {
		byTarget := map[string]requests{}
		for _, t := range targets {
			if byTarget[t.name], err = b.newRequests(t, u.config, o.oursContent); err != nil {
				return nil, err
			}
		}
		b.users = append(b.users, user{name: u.name, requests: byTarget})
	}
	// Our server caches every pod of the cluster for admission and the
	// controller; what that costs is measured while the pods are created.
	before, err := b.heapBytes(ctx, b.server())
	if err != nil {
		return nil, err
	}
	if err := b.createPods(ctx); err != nil {
		return nil, fmt.Errorf("creating pods: %w", err)
	}
	after, err := b.heapBytes(ctx, b.server())
	if err != nil {
		return nil, err
	}
	res.addOurs("heap of our server per 10k pods in the cluster", "MiB", float64(after-before)/float64(o.objects)*10000/(1<<20))
	return b, nil
}

func (b *bench) installCRD(ctx context.Context) error {
	var crd unstructured.Unstructured
	if err := yaml.Unmarshal(crdManifest, &crd.Object); err != nil {
		return err
	}
	if err := b.cluster.Apply(ctx, []*unstructured.Unstructured{&crd}, metav1.ApplyOptions{FieldManager: "bench-system", Force: true}); err != nil {
		return err
	}
	// Established is not enough: discovery must list it before clients
	// can map it.
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		resources, err := b.kube.Discovery().ServerResourcesForGroupVersion(targets[1].gvr.GroupVersion().String())
		return err == nil && len(resources.APIResources) > 0, nil
	})
}

// serviceAccountConfig creates the ordinary user of the benchmark: a
// service account allowed, by a Role, what an interceptor or requester
// needs, and returns a client configuration with a token of it.
func (b *bench) serviceAccountConfig(ctx context.Context) (*rest.Config, error) {
	if _, err := b.kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var groups []string
	for _, t := range targets {
		groups = append(groups, t.gvr.Group)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: serviceAccount},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: groups, Resources: []string{"evictionrequests"}, Verbs: []string{"create", "get", "list", "watch", "update", "patch", "delete", "deletecollection"}},
			{APIGroups: groups, Resources: []string{"evictionrequests/status"}, Verbs: []string{"update", "patch"}},
			// Our admission checks that the writer of a request may delete its pod.
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "delete"}},
		},
	}
	if _, err := b.kube.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: serviceAccount},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: serviceAccount},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: namespace}},
	}
	if _, err := b.kube.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	token, err := b.kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	config := rest.AnonymousClientConfig(b.admin)
	config.BearerToken = token.Status.Token
	// RBAC reaches the authorizer's cache within moments.
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, t := range targets {
			if _, err := client.Resource(t.gvr).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
	return config, err
}

// createPods creates o.objects pods on the kwok nodes, all listing the
// benchmark's interceptor, and waits until they run.
func (b *bench) createPods(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	logger.Info("Creating pods", "count", b.o.objects)
	b.pods = make([]pod, b.o.objects)
	nodes := b.cluster.NodeNames
	_, err := runConcurrently(ctx, 32, b.o.objects, func(ctx context.Context, i int) error {
		created, err := b.kube.CoreV1().Pods(namespace).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:        fmt.Sprintf("app-%05d", i),
				Annotations: map[string]string{v1alpha1.PodInterceptorsAnnotation: interceptorName},
			},
			Spec: corev1.PodSpec{
				NodeName:   nodes[i%len(nodes)],
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		b.pods[i] = pod{name: created.Name, uid: string(created.UID)}
		return nil
	})
	if err != nil {
		return err
	}
	// kwok's status updates would otherwise run beside the first phases.
	return wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := b.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, nil
		}
		running := 0
		for i := range list.Items {
			if list.Items[i].Status.Phase == corev1.PodRunning {
				running++
			}
		}
		logger.V(2).Info("Waiting for the pods to run", "running", running, "of", b.o.objects)
		return running == b.o.objects, nil
	})
}

// deleteAll deletes every object of t and waits until none is left.
func (b *bench) deleteAll(ctx context.Context, t target) error {
	requests := b.users[0].requests[t.name]
	// A server deletes a collection one object at a time and stops when the
	// request times out (tens of thousands take longer than a minute), so
	// the collection is deleted again until none is left. The check asks
	// for one object, not for all of them.
	return wait.PollUntilContextTimeout(ctx, time.Second, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := requests.deleteAll(ctx); err != nil && !apierrors.IsTimeout(err) && !errors.Is(err, context.DeadlineExceeded) {
			return false, err
		}
		n, _, err := requests.list(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && n == 0, nil
	})
}

// waitSelected waits until our controller has selected the interceptor of
// every object of the namespace: its write after each create is part of
// what a create costs, and must not run into the next phase. It asks for
// one object still without an active interceptor, so that polling costs
// the servers little of what is measured.
func (b *bench) waitSelected(ctx context.Context, t target) error {
	if !t.ours {
		return nil
	}
	requests := b.users[0].requests[t.name]
	unselected := fields.OneTermEqualSelector(v1alpha1.ActiveInterceptorNameField, "").String()
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, _, err := requests.list(ctx, metav1.ListOptions{FieldSelector: unselected, Limit: 1})
		return err == nil && n == 0, nil
	})
}

// runConcurrently runs op for 0..n-1 on workers goroutines and returns the
// latency of each; the first error stops it.
func runConcurrently(ctx context.Context, workers, n int, op func(ctx context.Context, i int) error) ([]time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	latencies := make([]time.Duration, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				if err := op(ctx, i); err != nil {
					cancel(fmt.Errorf("operation %d: %w", i, err))
					return
				}
				latencies[i] = time.Since(start)
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return latencies, context.Cause(ctx)
}
