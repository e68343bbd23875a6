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

// Package evictionrequest is the admission plugin that enforces the rules of
// KEP-4563 that need the target pod or the caller: the pod must exist with
// the UID of the request, the request takes its interceptors and labels from
// the pod, requesters are locked under a Forbid cancellation policy and after
// completion, a Forbid request outlives no deletion while its pod runs,
// whoever creates, changes or deletes a request or its status must be
// allowed to delete the pod, and only the eviction request controller's
// rights change the fields of the status that are the controller's.
package evictionrequest

import (
	"context"
	"errors"
	"fmt"
	"io"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/helper"
)

// PluginName is the name of the plugin in --enable-admission-plugins and
// --disable-admission-plugins; it is enabled by default.
const PluginName = "EvictionRequest"

// Register registers the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}

// Plugin admits EvictionRequests.
type Plugin struct {
	*admission.Handler
	pods       corelisters.PodLister
	client     kubernetes.Interface
	authorizer authorizer.UnconditionalAuthorizer
}

var (
	_ admission.MutationInterface                                  = &Plugin{}
	_ admission.ValidationInterface                                = &Plugin{}
	_ genericadmissioninitializer.WantsExternalKubeInformerFactory = &Plugin{}
	_ genericadmissioninitializer.WantsExternalKubeClientSet       = &Plugin{}
	_ genericadmissioninitializer.WantsUnconditionalAuthorizer     = &Plugin{}
)

// New returns the plugin; the admission initializers give it the pod
// informer, the kube client and the authorizer.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update, admission.Delete)}
}

// SetExternalKubeInformerFactory makes the plugin look pods up in the shared
// pod informer, and ready once it has synced.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	p.pods = f.Core().V1().Pods().Lister()
	p.SetReadyFunc(f.Core().V1().Pods().Informer().HasSynced)
}

// SetExternalKubeClientSet gives the plugin the client for live pod lookups.
func (p *Plugin) SetExternalKubeClientSet(client kubernetes.Interface) {
	p.client = client
}

// SetUnconditionalAuthorizer gives the plugin the server's delegated authorizer.
func (p *Plugin) SetUnconditionalAuthorizer(a authorizer.UnconditionalAuthorizer) {
	p.authorizer = a
}

// ValidateInitialization fails when an initializer did not run.
func (p *Plugin) ValidateInitialization() error {
	var errs []error
	if p.pods == nil {
		errs = append(errs, errors.New("missing pod lister"))
	}
	if p.client == nil {
		errs = append(errs, errors.New("missing kube client"))
	}
	if p.authorizer == nil {
		errs = append(errs, errors.New("missing authorizer"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s admission plugin: %w", PluginName, errors.Join(errs...))
	}
	return nil
}

// Admit resolves a new EvictionRequest from its pod: it checks that the pod
// exists with the requested UID, fills spec.interceptors from the pod's
// interceptor annotation and merges the pod's labels into the request's.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if !handles(a) || a.GetOperation() != admission.Create {
		return nil
	}
	er, ok := a.GetObject().(*coordination.EvictionRequest)
	if !ok || er.Spec.Target.PodRef == nil {
		// Validation refuses a request without a pod.
		return nil
	}
	if err := p.waitForReady(); err != nil {
		return err
	}
	// The caller learns nothing of a pod it may not delete.
	if err := p.authorizeDeletePod(ctx, a, er); err != nil {
		return err
	}
	if len(er.Spec.Interceptors) > 0 {
		return invalid(a, field.Forbidden(field.NewPath("spec", "interceptors"),
			"must not be set on creation: it is resolved from the pod's "+podInterceptorsAnnotation+" annotation"))
	}

	podRef := er.Spec.Target.PodRef
	pod, err := p.getPod(ctx, a.GetNamespace(), podRef.Name, podRef.UID)
	if err != nil {
		return err
	}
	if pod == nil {
		return invalid(a, field.NotFound(field.NewPath("spec", "target", "podRef", "name"), podRef.Name))
	}
	if string(pod.UID) != podRef.UID {
		return invalid(a, field.Invalid(field.NewPath("spec", "target", "podRef", "uid"), podRef.UID,
			fmt.Sprintf("pod %s has UID %s", pod.Name, pod.UID)))
	}

	interceptors, errs := interceptorsOf(pod)
	if len(errs) > 0 {
		return invalid(a, errs...)
	}
	er.Spec.Interceptors = interceptors
	// The pod's labels win, so that selectors on them find its requests.
	er.Labels = labels.Merge(er.Labels, pod.Labels)
	return nil
}

// Validate enforces the rules that hold for every write once mutation is
// done: the caller may delete the pod, requesters are locked under a Forbid
// cancellation policy and after completion, a Forbid request is not deleted
// while its pod runs, and a status write changes the controller's fields
// only with the controller's rights (authorizeControllerChanges).
//
// KEP-4563 asks for the right to delete the pod on every create, update
// and delete of a request, and a write of its status is an update: a status
// write can end an interceptor's turn and, once no interceptor is left,
// start the pod's eviction, so whoever may write it must be someone who
// could have deleted the pod.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if !handles(a) {
		return nil
	}
	if err := p.waitForReady(); err != nil {
		return err
	}
	target := a.GetObject()
	if a.GetOperation() == admission.Delete {
		target = a.GetOldObject()
	}
	er, ok := target.(*coordination.EvictionRequest)
	if !ok || er.Spec.Target.PodRef == nil {
		return nil
	}
	if err := p.authorizeDeletePod(ctx, a, er); err != nil {
		return err
	}
	switch a.GetOperation() {
	case admission.Update:
		oldER := a.GetOldObject().(*coordination.EvictionRequest)
		if a.GetSubresource() == "status" {
			return p.authorizeControllerChanges(ctx, a, er, oldER)
		}
		return validateRequestersLocked(a, er, oldER)
	case admission.Delete:
		return p.validateDeletion(ctx, a, er)
	}
	return nil
}

// handles is true for writes of evictionrequests and their status.
func handles(a admission.Attributes) bool {
	if a.GetResource().GroupResource() != coordination.Resource("evictionrequests") {
		return false
	}
	return a.GetSubresource() == "" || a.GetSubresource() == "status"
}

// waitForReady waits for the pod informer; until it has synced, writes get a
// retryable 503 rather than a decision on an empty cache.
func (p *Plugin) waitForReady() error {
	if p.WaitForReady() {
		return nil
	}
	err := apierrors.NewServiceUnavailable(fmt.Sprintf("the %s admission plugin is waiting for its pod cache to sync; retry shortly", PluginName))
	err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: 1}
	return err
}

// authorizeDeletePod requires the caller to be allowed to delete the target
// pod: asking for an eviction is asking for the pod's deletion. It asks
// first whether the caller may delete every pod of the namespace, a
// question the delegated authorizer answers from its cache for the same
// caller and namespace (one review per caller, namespace and cache period,
// where the question by name costs one per pod), and only when not about
// the pod by name. RBAC grants a question without a name only through
// rules without resourceNames, which grant every name: a caller allowed to
// delete only some pods is asked about each one, and refused for the others.
func (p *Plugin) authorizeDeletePod(ctx context.Context, a admission.Attributes, er *coordination.EvictionRequest) error {
	podName := er.Spec.Target.PodRef.Name
	deletePods := authorizer.AttributesRecord{
		User:            a.GetUserInfo(),
		Verb:            "delete",
		Namespace:       a.GetNamespace(),
		APIGroup:        "",
		APIVersion:      "v1",
		Resource:        "pods",
		ResourceRequest: true,
	}
	// An Allow is read as kube-apiserver's authorization filter reads it,
	// whatever error came with it, in both questions.
	if decision, _, _ := p.authorizer.Authorize(ctx, deletePods); decision == authorizer.DecisionAllow {
		return nil
	}
	deletePods.Name = podName
	decision, reason, err := p.authorizer.Authorize(ctx, deletePods)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	msg := fmt.Sprintf(`user %q cannot delete pod %q in namespace %q, which writing an EvictionRequest for it or its status requires (needs verb "delete" on resource "pods")`,
		a.GetUserInfo().GetName(), podName, a.GetNamespace())
	if reason != "" {
		msg += ": " + reason
	}
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("%s: authorization failed: %w", msg, err))
	}
	return admission.NewForbidden(a, errors.New(msg))
}

// validateRequestersLocked refuses changes of spec.requesters while the
// cancellation policy is Forbid or once the request is complete, judged on
// the stored object.
func validateRequestersLocked(a admission.Attributes, newER, oldER *coordination.EvictionRequest) error {
	if apiequality.Semantic.DeepEqual(newER.Spec.Requesters, oldER.Spec.Requesters) {
		return nil
	}
	path := field.NewPath("spec", "requesters")
	if helper.CancellationForbidden(&oldER.Status) {
		return invalid(a, field.Forbidden(path, "may not change while status.evictionRequestCancellationPolicy is Forbid"))
	}
	if helper.IsComplete(&oldER.Status) {
		return invalid(a, field.Forbidden(path, "may not change once the Complete condition is True"))
	}
	return nil
}

// validateDeletion refuses to delete a request whose cancellation policy is
// Forbid while its pod still exists and has not terminated.
func (p *Plugin) validateDeletion(ctx context.Context, a admission.Attributes, er *coordination.EvictionRequest) error {
	if !helper.CancellationForbidden(&er.Status) {
		return nil
	}
	// The cache may still hold a pod that is gone: only a live read may
	// keep the request from being deleted.
	podRef := er.Spec.Target.PodRef
	pod, err := p.livePod(ctx, a.GetNamespace(), podRef.Name)
	if err != nil {
		return err
	}
	if pod == nil || string(pod.UID) != podRef.UID || podutil.IsTerminal(pod) {
		return nil
	}
	return admission.NewForbidden(a, fmt.Errorf(
		"status.evictionRequestCancellationPolicy is Forbid and pod %s (UID %s) is still %s: the EvictionRequest cannot be deleted until the pod terminates",
		pod.Name, pod.UID, pod.Status.Phase))
}

// invalid returns a 422 naming the fields of errs.
func invalid(a admission.Attributes, errs ...*field.Error) error {
	return apierrors.NewInvalid(coordination.Kind("EvictionRequest"), a.GetName(), errs)
}
