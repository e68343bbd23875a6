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
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// podOnCordonedNode creates the one-replica Deployment db of createDeployment
// and returns its pod once the pod's node is cordoned and another node of the
// pool can take a replacement.
func podOnCordonedNode(t *testing.T, ns, interceptorName string, mutate func(*appsv1.Deployment)) corev1.Pod {
	t.Helper()
	f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "db", 1, interceptorName, mutate)
	pod := f.PodsOf(t, ns, "db")[0]
	f.Cordon(t, pod.Spec.NodeName)
	f.PoolNode(t, ns)
	return pod
}

// startOwnSurgeInterceptor runs a surge interceptor of the test's own, named
// name and limited to ns, so that the test may kill it. Its log and its
// leader election lease are named after ns and the first label of name, so
// that a test may run two; the Lease is in ns, where the test binds the
// interceptors' leader-election role to it, as docs/actors.md has users
// bind it in an interceptor's own namespace.
func startOwnSurgeInterceptor(t *testing.T, ns, name string, args ...string) *localcluster.Process {
	t.Helper()
	bindLeaderElection(t, ns, "evictionrequest-system", "evictionrequest-surge-interceptor")
	id := "surge-" + ns + "-" + strings.SplitN(name, ".", 2)[0]
	p, err := f.StartSurgeInterceptor(t.Context(), localcluster.WorkloadOptions{
		Name: id,
		Args: append([]string{"--name=" + name, "--namespace=" + ns, "--leader-elect-resource-name=" + id, "--leader-elect-resource-namespace=" + ns,
			"--poll-interval=500ms", "--janitor-period=1s", "--heartbeat-period=1s", "--v=4"}, args...),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// bindLeaderElection binds evictionrequest-interceptor-leader-election to
// the service account saNamespace/sa in ns, once.
func bindLeaderElection(t *testing.T, ns, saNamespace, sa string) {
	t.Helper()
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "leader-election-" + sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "evictionrequest-interceptor-leader-election"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: saNamespace, Name: sa}},
	}
	if _, err := f.Kube.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// waitForSurge waits until the Deployment surges and returns it.
func waitForSurge(t *testing.T, ns, name string, replicas int32) *appsv1.Deployment {
	t.Helper()
	return f.WaitForDeployment(t, ns, name, "the surge of "+name, func(dep *appsv1.Deployment) error {
		if _, ok := dep.Annotations[surge.StateAnnotation]; !ok || *dep.Spec.Replicas != replicas {
			return fmt.Errorf("replicas %d, annotations %v", *dep.Spec.Replicas, dep.Annotations)
		}
		return nil
	})
}

// watchMessages records every status.message the EvictionRequest name
// shows from now on while interceptor is active; the function it returns
// stops the watch and returns them in order.
func watchMessages(t *testing.T, ns, name, interceptor string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	options := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	list, err := f.EvictionRequests(ns).List(ctx, options)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		messages []string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			options.ResourceVersion = rv
			w, err := f.EvictionRequests(ns).Watch(ctx, options)
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("watching EvictionRequest %s: %v", name, err)
				}
				return
			}
			for e := range w.ResultChan() {
				if e.Type == watch.Error {
					// Expired (or stopped): the messages cannot be
					// followed any more.
					if ctx.Err() == nil {
						t.Errorf("watching EvictionRequest %s: %v", name, apierrors.FromObject(e.Object))
					}
					w.Stop()
					return
				}
				if er, ok := e.Object.(*v1alpha1.EvictionRequest); ok {
					rv = er.ResourceVersion
					if ptr.Deref(er.Status.ActiveInterceptorName, "") != interceptor {
						continue
					}
					mu.Lock()
					if n := len(messages); n == 0 || messages[n-1] != er.Status.Message {
						messages = append(messages, er.Status.Message)
					}
					mu.Unlock()
				}
			}
			w.Stop()
		}
	}()
	stop := func() []string {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return messages
	}
	t.Cleanup(func() { stop() })
	return stop
}

// waitForReplacementPod waits until Deployment db has a pod besides
// original and returns its name.
func waitForReplacementPod(t *testing.T, ns string, original corev1.Pod) string {
	t.Helper()
	var name string
	framework.Eventually(t, time.Minute, "a replacement of "+original.Name, func(context.Context) error {
		for _, pod := range f.PodsOf(t, ns, "db") {
			if pod.UID != original.UID {
				name = pod.Name
				return nil
			}
		}
		return fmt.Errorf("no pod besides %s", original.Name)
	})
	return name
}

// waitForSurgeBy waits until the Deployment name is in a surge of the
// interceptor named by.
func waitForSurgeBy(t *testing.T, ns, name, by string) {
	t.Helper()
	f.WaitForDeployment(t, ns, name, fmt.Sprintf("a surge of %s by %s", name, by), func(dep *appsv1.Deployment) error {
		var state surge.State
		if value, ok := dep.Annotations[surge.StateAnnotation]; !ok || json.Unmarshal([]byte(value), &state) != nil || state.Interceptor != by {
			return fmt.Errorf("replicas %d, annotations %v", *dep.Spec.Replicas, dep.Annotations)
		}
		return nil
	})
}

// waitForReplacementBySurge waits until the request for original completes
// with the pod deleted and Deployment db is back at one replica, a new pod,
// and checks that neither the Eviction API nor a time-out removed it.
func waitForReplacementBySurge(t *testing.T, ns string, original corev1.Pod) {
	t.Helper()
	f.WaitForCompletion(t, ns, string(original.UID), v1alpha1.CompleteReasonPodDeleted)
	f.WaitForReplicas(t, ns, "db", 1)
	if pods := f.PodsOf(t, ns, "db"); len(pods) != 1 || pods[0].UID == original.UID {
		t.Errorf("pods after the surge: %v", framework.PodNames(pods))
	}
	if reasons := f.EventReasons(t, ns, "", string(original.UID)); slices.Contains(reasons, coordinationcontroller.EventEvicted) || slices.Contains(reasons, coordinationcontroller.EventInterceptorTimedOut) {
		t.Errorf("the pod was evicted through the API or the interceptor timed out: %v", reasons)
	}
}
