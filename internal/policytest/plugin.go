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

// Package policytest admits writes through the ValidatingAdmissionPolicies
// the install ships as kube-apiserver does: through its own admission
// plugin (k8s.io/apiserver/pkg/admission/plugin/policy/validating), with
// its compilation, CEL environment, cost budget, matching, bindings and
// failure policy. Unit tests use it to hold a policy to the Go code that
// reads the same objects; the e2e suites show the policies on the real
// control plane.
package policytest

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/util/compatibility"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/featuregate"

	"github.com/evictionrequest/apiserver/internal/cachetest"
)

// Plugin is kube-apiserver's ValidatingAdmissionPolicy admission plugin,
// serving a fixed set of policies and bindings.
type Plugin struct {
	plugin  *validating.Plugin
	objects admission.ObjectInterfaces
}

// New starts the plugin with policies and bindings, defaulted as
// kube-apiserver stores them, and authz answering the policies'
// authorizer checks; it stops when ctx is done.
func New(ctx context.Context, authz authorizer.Authorizer, policies []*admissionregistrationv1.ValidatingAdmissionPolicy, bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) (*Plugin, error) {
	var objects []runtime.Object
	for _, p := range policies {
		p = p.DeepCopy()
		defaultPolicy(p)
		objects = append(objects, p)
	}
	for _, b := range bindings {
		b = b.DeepCopy()
		defaultBinding(b)
		objects = append(objects, b)
	}
	client := fake.NewClientset(objects...)
	factory := cachetest.KubeInformers(client, cachetest.Whole)
	plugin, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, err
	}
	initializer.New(client, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), factory, authz,
		featuregate.NewFeatureGate(), compatibility.DefaultBuildEffectiveVersion(), ctx.Done(), testrestmapper.TestOnlyStaticRESTMapper(clientgoscheme.Scheme)).Initialize(plugin)
	if err := plugin.ValidateInitialization(); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !plugin.WaitForReady() {
		return nil, errors.New("the ValidatingAdmissionPolicy plugin did not sync its policies")
	}
	return &Plugin{plugin: plugin, objects: admission.NewObjectInterfacesFromScheme(clientgoscheme.Scheme)}, nil
}

// Write is a request to admit: obj written by user, through resource and
// subresource; old is the object before an update.
type Write struct {
	Operation   admission.Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Object, Old runtime.Object
	User        user.Info
}

// Admit returns the error kube-apiserver answers the write with, nil when
// the policies admit it.
func (p *Plugin) Admit(ctx context.Context, w Write) error {
	accessor, err := metaAccessor(w.Object)
	if err != nil {
		return err
	}
	kinds, _, err := clientgoscheme.Scheme.ObjectKinds(w.Object)
	if err != nil {
		return err
	}
	attrs := admission.NewAttributesRecord(w.Object, w.Old, kinds[0], accessor.GetNamespace(), accessor.GetName(),
		w.Resource, w.Subresource, w.Operation, nil, false, w.User)
	return p.plugin.Validate(ctx, attrs, p.objects)
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	accessor, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return accessor, nil
}

// defaultPolicy sets what kube-apiserver defaults in a policy it stores
// (k8s.io/kubernetes/pkg/apis/admissionregistration/v1's defaults).
func defaultPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		fail := admissionregistrationv1.Fail
		p.Spec.FailurePolicy = &fail
	}
	if p.Spec.MatchConstraints != nil {
		defaultMatchResources(p.Spec.MatchConstraints)
	}
}

// defaultBinding sets what kube-apiserver defaults in a binding it stores.
func defaultBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	if b.Spec.MatchResources != nil {
		defaultMatchResources(b.Spec.MatchResources)
	}
}

func defaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m.MatchPolicy == nil {
		equivalent := admissionregistrationv1.Equivalent
		m.MatchPolicy = &equivalent
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				all := admissionregistrationv1.AllScopes
				rules[i].Scope = &all
			}
		}
	}
}
