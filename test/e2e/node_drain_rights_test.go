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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// annotate merge-patches annotations onto node as client, returning the
// error.
func annotate(t *testing.T, client kubernetes.Interface, node string, annotations map[string]string) error {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	_, err := client.CoreV1().Nodes().Patch(t.Context(), node, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// wantForbidden checks that err is kube-apiserver's 403 saying want.
func wantForbidden(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want 403 saying %q", what, err, want)
	}
}

// The right to patch a Node does not lend the drain's rights: a user who
// may only patch nodes (and their status) cannot start a drain, set its
// escalation to delete, or report a node's graceful shutdown; once the user
// may evict pods it can start a drain, but still not one that deletes;
// once it may delete pods, it can; only the node itself reports its
// shutdown. The evictionrequest-node-drain policy, as the install ships it.
func TestOnlyThoseWithADrainsRightsStartOne(t *testing.T) {
	t.Parallel()
	node := f.NewNode(t)
	user := "node-patcher-" + node
	f.GrantCluster(t, user, user+"-nodes", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes", "nodes/status"}, Verbs: []string{"get", "patch", "update"}})
	patcher, err := kubernetes.NewForConfig(f.ImpersonatingConfig(user))
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "the RBAC of "+user, func(ctx context.Context) error {
		_, err := patcher.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err
	})
	if err := annotate(t, patcher, node, map[string]string{"example.com/harmless": "true"}); err != nil {
		t.Fatalf("an annotation of no drain's: %v", err)
	}
	const evict, deletePods = "create pods/eviction", "delete pods"
	wantForbidden(t, "the drain annotation", annotate(t, patcher, node, map[string]string{nodedrain.DrainAnnotation: "true"}), evict)
	wantForbidden(t, "a deadline that deletes", annotate(t, patcher, node, map[string]string{drain.DeadlineAnnotation: "5s", drain.OnDeadlineAnnotation: "delete"}), evict)
	shutdown := corev1.NodeCondition{Type: corev1.NodeGracefulNodeShutdownInProgress, Status: corev1.ConditionTrue, Reason: "NodeShutdown"}
	_, err = drain.SetNodeConditions(t.Context(), patcher.CoreV1(), node, nil, time.Now(), "kubelet", shutdown)
	wantForbidden(t, "a graceful shutdown reported by "+user, err, "only its kubelet (system:node:"+node+")")

	f.GrantCluster(t, user, user+"-evict", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}})
	framework.Eventually(t, time.Minute, user+" starting a drain once it may evict", func(context.Context) error {
		return annotate(t, patcher, node, map[string]string{nodedrain.DrainAnnotation: "true", drain.DeadlineAnnotation: "30m", drain.OnDeadlineAnnotation: "evict"})
	})
	wantForbidden(t, "a deadline that deletes, without delete pods", annotate(t, patcher, node, map[string]string{drain.OnDeadlineAnnotation: "delete"}), deletePods)

	f.GrantCluster(t, user, user+"-delete", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}})
	framework.Eventually(t, time.Minute, user+" setting a drain that deletes once it may delete pods", func(context.Context) error {
		return annotate(t, patcher, node, map[string]string{drain.OnDeadlineAnnotation: "delete"})
	})
	f.SetNodeConditionAsKubelet(t, node, corev1.NodeGracefulNodeShutdownInProgress, corev1.ConditionTrue, "NodeShutdown")
}

// A user who may only patch nodes/status cannot start a drain for a
// graceful shutdown by conditions the policy and the node drain could
// read differently (a look-alike of the kubelet's message, two
// GracefulNodeShutdownInProgress conditions in either order): the policy
// refuses the write or the node drain ignores it, and the node's pod gets
// no EvictionRequest.
func TestAStatusPatcherStartsNoShutdownDrain(t *testing.T) {
	t.Parallel()
	nodeDrain, err := participant.New(evictionapi.Coordination, nodedrain.DefaultRequesterName, f.Kube, f.Clientset, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.CheckAStatusPatcherStartsNoShutdownDrain(t, nodeDrain)
}
