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
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// CheckPluginEscalationThroughTheBridge checks, in a namespace opted in to
// the eviction API bridge, that a drain's escalation goes past the
// participants of the pod held only for a caller that may delete the
// pod: an eviction that asks to skip them, by a user who may only evict,
// is refused with 403 naming the rule and the pod stays; then
// `kubectl evictionrequest drain --deadline --on-deadline=evict`, as an
// admin, evicts it at its deadline, once (kube-apiserver's audit log).
func (f *Framework) CheckPluginEscalationThroughTheBridge(t *testing.T, plugin string, held PodOptions) {
	t.Helper()
	ns := f.NewNamespace(t)
	f.OptInToTheBridge(t, ns)
	held.Node = f.NewNode(t)
	pod := f.CreatePod(t, ns, "db-0", held)

	const evictor = "e2e-evictor"
	f.GrantRole(t, ns, evictor, "evictor", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}})
	client, err := kubernetes.NewForConfig(f.ImpersonatingConfig(evictor))
	if err != nil {
		t.Fatal(err)
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name}}
	policyutil.SkipParticipants(eviction, drain.EscalationReason)
	err = client.PolicyV1().Evictions(ns).Evict(t.Context(), eviction)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "only to a caller that may delete the pod: "+evictor) {
		t.Fatalf("an escalation by a user who may only evict: %v, want 403 naming the rule", err)
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the pod after a refused escalation: %v", err)
	}

	r := f.RunCommand(t, 2*time.Minute, plugin, "drain", held.Node, "--force", "--deadline=5s", "--on-deadline=evict", "--timeout=60s")
	if r.Err != nil {
		t.Fatalf("the plugin's drain with --on-deadline=evict: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	f.WaitForPodGone(t, ns, pod.Name)
	if _, granted := f.AuditedEvictions(t, ns, pod.Name); granted != 1 {
		t.Errorf("%d evictions of the pod granted, want 1", granted)
	}
}
