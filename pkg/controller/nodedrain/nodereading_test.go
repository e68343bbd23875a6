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

package nodedrain

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/internal/policytest"
)

// The node drain reads each case of the one table as the table says.
func TestTheNodeDrainReadsNodeConditionsByTheOneRule(t *testing.T) {
	for _, tc := range nodeReadingCases {
		t.Run(tc.name, func(t *testing.T) {
			s := drainState(node().Conditions(tc.conditions...).Obj(), true)
			if s.shuttingDown != tc.shutdown || s.maintenance != tc.maintenance {
				t.Errorf("the node drain reads a shutdown %v, a drain requested by MaintenancePlanned %v; the rule: %v, %v",
					s.shuttingDown, s.maintenance, tc.shutdown, tc.maintenance)
			}
			if s.wanted() != (tc.shutdown || tc.maintenance) {
				t.Errorf("the node drain drains: %v", s.wanted())
			}
		})
	}
}

// The users of the policy's checks, beside the node's kubelet: one who
// may only patch nodes/status, and a holder of the drain's rights.
const (
	statusPatcher = "status-patcher"
	drainer       = "drainer"
)

var kubelet = &user.DefaultInfo{Name: "system:node:" + nodeName, Groups: []string{"system:nodes", user.AllAuthenticated}}

// What the policy's refusals say.
const (
	refusesShutdown = "may not report a graceful shutdown"
	refusesDrain    = "may not start or change a node drain"
)

// The evictionrequest-node-drain policy, as every overlay ships it (make
// manifests renders them from the chart, make verify-manifests holds them
// to it), admitted through kube-apiserver's admission plugin, reads each
// case of the one table as the node drain does
// (TestTheNodeDrainReadsNodeConditionsByTheOneRule). A user who may only
// patch nodes/status is refused what the table reads as a shutdown or a
// drain requested, and nothing else. Each of the policy's rules alone
// (kube-apiserver answers with the first refusal): a holder of the
// drain's rights may start no shutdown, but may write one over a node that
// reports it; the kubelet may request no drain, but may write one over a
// node whose MaintenancePlanned requests it.
func TestThePolicyReadsNodeConditionsAsTheNodeDrain(t *testing.T) {
	for _, plugin := range nodeDrainPolicies(t) {
		for _, tc := range nodeReadingCases {
			t.Run(plugin.name+"/"+tc.name, func(t *testing.T) {
				p := &policyCheck{t: t, plugin: plugin}
				table := node().Conditions(tc.conditions...).Obj()
				if got := p.admit(statusPatcher, node().Obj(), table) != nil; got != (tc.shutdown || tc.maintenance) {
					t.Errorf("the status patcher writing it over a Ready node is refused: %v", got)
				}
				p.check("a holder of the drain's rights writes it over a Ready node", drainer, node().Obj(), table, tc.shutdown, false)
				p.check("a holder of the drain's rights writes the kubelet's shutdown over it", drainer, table, shuttingDown().Obj(), !tc.shutdown, false)
				p.check("the kubelet writes it over a Ready node", kubelet.Name, node().Obj(), table, false, tc.maintenance)
				p.check("the kubelet writes MaintenancePlanned=True over it", kubelet.Name, table,
					node().Condition(corev1.NodeMaintenancePlanned, corev1.ConditionTrue, "", "").Obj(), false, !tc.maintenance)
			})
		}
	}
}

// The drain annotation asks for a drain only as "true"; the policy
// refuses a user without the drain's rights any value of it, so that no
// spelling asks for a drain the policy let through.
func TestThePolicyGuardsEveryValueOfTheDrainAnnotation(t *testing.T) {
	for _, plugin := range nodeDrainPolicies(t) {
		for _, value := range []string{"true", "True", "TRUE", " true", "true ", "yes", "false", ""} {
			t.Run(fmt.Sprintf("%s/%q", plugin.name, value), func(t *testing.T) {
				annotated := node().Annotation(DrainAnnotation, value).Obj()
				if got, want := drainState(annotated, true).marked, value == "true"; got != want {
					t.Errorf("the node drain reads a drain asked for: %v, want %v", got, want)
				}
				err := plugin.shipped.Admit(t.Context(), policytest.Write{
					Operation: admission.Update, Resource: corev1.SchemeGroupVersion.WithResource("nodes"),
					Object: annotated, Old: node().Obj(), User: &user.DefaultInfo{Name: statusPatcher, Groups: []string{user.AllAuthenticated}},
				})
				if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), refusesDrain) {
					t.Errorf("the annotation set by a user without the drain's rights: %v, want the policy's refusal", err)
				}
			})
		}
	}
}

// The policy decides within its cost budget on the largest node etcd
// stores (its default --max-request-bytes, 1.5 MiB): a budget exceeded is
// an evaluation error, which the policy's failurePolicy Ignore admits.
// Conditions of one letter make the most of them; after the kubelet's
// shutdown come conditions of a type the rule reads, or of none.
func TestThePolicyReadsTheLargestNodeWithinItsBudget(t *testing.T) {
	for _, plugin := range nodeDrainPolicies(t) {
		for _, filler := range []corev1.NodeConditionType{"X", corev1.NodeReady, corev1.NodeDrainInProgress, corev1.NodeMaintenancePlanned} {
			t.Run(plugin.name+"/"+string(filler), func(t *testing.T) {
				n := largestNode(filler)
				if s := drainState(n, true); !s.shuttingDown {
					t.Fatal("the node drain reads no shutdown")
				}
				p := &policyCheck{t: t, plugin: plugin}
				p.check("a holder of the drain's rights writes it over a Ready node", drainer, node().Obj(), n, true, false)
			})
		}
	}
}

// largestNode is a node reporting the kubelet's shutdown, then as many
// conditions of type filler, with no status, as etcd stores by default.
func largestNode(filler corev1.NodeConditionType) *corev1.Node {
	const etcdMaxRequestBytes = 1536 * 1024
	n := node().Conditions(kubeletShutdown).Obj()
	each := node().Conditions(corev1.NodeCondition{Type: filler}).Obj().Size() - node().Conditions().Obj().Size()
	for range (etcdMaxRequestBytes - n.Size()) / each {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: filler})
	}
	return n
}

// policyCheck admits node writes through a node drain policy.
type policyCheck struct {
	t      *testing.T
	plugin namedPlugin
}

// admit admits the update of old to obj by username through nodes/status,
// and returns the policy's answer. It fails the test if the policy could
// not decide: an evaluation error, which failurePolicy Ignore admits,
// shows as an error of the policy with failurePolicy Fail.
func (p *policyCheck) admit(username string, old, obj *corev1.Node) error {
	p.t.Helper()
	u := &user.DefaultInfo{Name: username, Groups: []string{user.AllAuthenticated}}
	if username == kubelet.Name {
		u = kubelet
	}
	write := policytest.Write{
		Operation: admission.Update, Resource: corev1.SchemeGroupVersion.WithResource("nodes"), Subresource: "status",
		Object: obj, Old: old, User: u,
	}
	err := p.plugin.shipped.Admit(p.t.Context(), write)
	strict := p.plugin.strict.Admit(p.t.Context(), write)
	if fmt.Sprint(strict) != fmt.Sprint(err) {
		p.t.Errorf("the policy could not decide on a write by %s: %v", username, strict)
	}
	return err
}

// check admits the update of old to obj by username and fails the test
// unless the policy refuses a shutdown reported and a drain requested as
// wanted.
func (p *policyCheck) check(what, username string, old, obj *corev1.Node, shutdown, drain bool) {
	p.t.Helper()
	err := p.admit(username, old, obj)
	if err != nil && !apierrors.IsForbidden(err) {
		p.t.Errorf("%s: %v, want the policy's verdict", what, err)
		return
	}
	message := fmt.Sprint(err)
	if got := err != nil && strings.Contains(message, refusesShutdown); got != shutdown {
		p.t.Errorf("%s: the policy refuses a shutdown: %v, want %v (%v)", what, got, shutdown, err)
	}
	if got := err != nil && strings.Contains(message, refusesDrain); got != drain {
		p.t.Errorf("%s: the policy refuses a drain: %v, want %v (%v)", what, got, drain, err)
	}
}

// namedPlugin is the admission plugin of a node drain policy as shipped,
// and with failurePolicy Fail, named after the first overlay that ships
// it.
type namedPlugin struct {
	shipped, strict *policytest.Plugin
	name            string
}

// nodeDrainPolicies starts an admission plugin for each distinct
// evictionrequest-node-drain policy of the overlays, with its binding: a
// drainer holds the drain's rights, the status patcher none.
func nodeDrainPolicies(t *testing.T) []namedPlugin {
	t.Helper()
	grants := policytest.Grants{
		{User: drainer, Verb: "create", Resource: "pods", Subresource: "eviction"},
		{User: drainer, Verb: "delete", Resource: "pods"},
	}
	var plugins []namedPlugin
	seen := map[string]bool{}
	for _, overlay := range artifacts.Overlays {
		policy, binding := nodeDrainPolicy(t, overlay)
		key, err := json.Marshal(policy.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := seen[string(key)]; ok {
			continue
		}
		strictPolicy := policy.DeepCopy()
		strictPolicy.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
		named := namedPlugin{name: overlay}
		for into, p := range map[**policytest.Plugin]*admissionregistrationv1.ValidatingAdmissionPolicy{&named.shipped: policy, &named.strict: strictPolicy} {
			plugin, err := policytest.New(t.Context(), grants.Authorizer(),
				[]*admissionregistrationv1.ValidatingAdmissionPolicy{p}, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{binding})
			if err != nil {
				t.Fatal(err)
			}
			*into = plugin
		}
		seen[string(key)] = true
		plugins = append(plugins, named)
	}
	if len(plugins) == 0 {
		t.Fatal("no overlay ships the evictionrequest-node-drain policy")
	}
	return plugins
}

// nodeDrainPolicy is the evictionrequest-node-drain policy of overlay and
// its binding.
func nodeDrainPolicy(t *testing.T, overlay string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	data, err := artifacts.InstallYAML(overlay)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := artifacts.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	for _, obj := range objects {
		var into any
		switch {
		case obj.GetName() != "evictionrequest-node-drain":
			continue
		case obj.GetKind() == "ValidatingAdmissionPolicy":
			into = policy
		case obj.GetKind() == "ValidatingAdmissionPolicyBinding":
			into = binding
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
			t.Fatal(err)
		}
	}
	if policy.Name == "" || binding.Name == "" {
		t.Fatalf("overlay %s ships no evictionrequest-node-drain policy and binding", overlay)
	}
	return policy, binding
}
